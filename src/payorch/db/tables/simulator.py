"""Tables of the simulator domain (see migration for the same names)."""

from payorch.db.tables.base import metadata  # noqa: F401
