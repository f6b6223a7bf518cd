"""An example shop that takes payments through payorch with `payorch.client` (see README.md)."""
