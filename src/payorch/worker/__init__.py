"""Background work: one loop per job, woken early when there is new work."""
