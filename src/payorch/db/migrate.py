"""Apply Alembic migrations programmatically (``payorch migrate``, ``payorch serve``)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", database_url)
    return config


def upgrade(database_url: str) -> None:
    """Bring the database to the newest revision. Runs its own event loop: call from sync code.

    A new SQLite file (and its folder) is created by ``Database`` (db/engine.py), mode 0600.
    """
    command.upgrade(alembic_config(database_url), "heads")


def head_revisions() -> set[str]:
    return set(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads())


def upgrade_in_thread(database_url: str) -> None:
    """For async callers (tests): Alembic's env.py starts its own loop, so run it off-loop."""
    import threading

    errors: list[BaseException] = []

    def target() -> None:
        try:
            upgrade(database_url)
        except BaseException as exc:  # noqa: BLE001 - re-raised below in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]

