"""The creation guard: a command that only reads or changes records needs a database that is
there already. The embedded default is a relative path (./payorch.db), so a command run from
another directory would otherwise create an empty database there and work on it silently."""

from __future__ import annotations

from pathlib import Path

from payorch.db.engine import sqlite_file


def missing_database(url: str) -> Path | None:
    """The file of an embedded database that does not exist yet, else None (PostgreSQL, an
    in-memory database, or a file that is there)."""
    path = sqlite_file(url)
    return path if path is not None and not path.exists() else None
