"""payorch: one payment API over several providers, with a built-in sandbox simulator."""

__version__ = "0.1.0"
