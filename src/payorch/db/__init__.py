"""Database access: the engine (Database), the phases of multi-phase flows (Phases), column types,
tables and migrations."""

from payorch.db.engine import Database, Phases

__all__ = ["Database", "Phases"]
