"""Database access: the engine (Database), column types, tables and migrations."""

from payorch.db.engine import Database

__all__ = ["Database"]
