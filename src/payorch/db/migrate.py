"""Apply Alembic migrations programmatically (``payorch migrate``, ``payorch serve``)."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Migration:
    applied: list[str]  # the revisions applied, oldest first
    newer: list[str]  # the database's revisions this code does not know (a newer release's)


def upgrade(database_url: str, *, transaction_pooling: bool = False) -> list[str]:
    """Bring the database to the newest revision; the revisions applied, oldest first."""
    return migrate(database_url, transaction_pooling=transaction_pooling).applied


def migrate(database_url: str, *, transaction_pooling: bool = False) -> Migration:
    """Bring the database to the newest revision, unless a newer release migrated it: then it is
    left as it is (docs/deployment.md, "Upgrading"). Runs its own event loop: call from sync code.
    ``transaction_pooling``: behind a pooler in transaction mode (PAYORCH_DATABASE_TRANSACTION_POOLING,
    payorch.db.pooling).

    A new SQLite file (and its folder) is created by ``Database`` (db/engine.py), mode 0600.
    """
    applied: list[str] = []
    config = alembic_config(database_url)
    # Read by env.py: alembic calls it after each revision it applies.
    config.attributes["on_version_apply"] = lambda *, step, **_: applied.append(step.up_revision_id)
    config.attributes["transaction_pooling"] = transaction_pooling
    command.upgrade(config, "heads")
    return Migration(applied=applied, newer=list(config.attributes.get("newer_revisions", [])))


def migration_report(done: Migration) -> str:
    """What `payorch migrate` says: which revisions it applied, or that there was nothing to do."""
    heads = ", ".join(sorted(head_revisions()))
    if done.newer:
        newer = ", ".join(done.newer)
        ours = f"this release's newest migration ({heads})"
        return f"the database is at {newer}, newer than {ours}; left as it is"
    if not done.applied:
        return f"the database is at the newest migration ({heads}); nothing to do"
    before = _down_revision(done.applied[0]) or "nothing (an empty database)"
    count = len(done.applied)
    return f"migrated the database from {before} to {done.applied[-1]}: {count} revision(s) applied"


def _down_revision(revision: str) -> str | None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://")).get_revision(revision)
    down = script.down_revision if script is not None else None
    return down if isinstance(down, str) else None


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
