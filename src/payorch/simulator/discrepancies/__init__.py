"""The discrepancy control: a simulated provider made to disagree with payorch (docs/simulator.md)."""
