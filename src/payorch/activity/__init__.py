"""The activity log: who changed what, when, from where, with what outcome; one entry per change,
written in the change's own transaction, chained per application by hashes (payorch.activity.chain)."""
