"""The simulated market (docs/simulator.md, "The simulated market"): per application and
simulated provider, how the simulator's own buyer decides a checkout, so load runs need no page."""
