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


def upgrade(database_url: str) -> list[str]:
    """Bring the database to the newest revision; the revisions applied, oldest first. Runs its
    own event loop: call from sync code.

    A new SQLite file (and its folder) is created by ``Database`` (db/engine.py), mode 0600.
    """
    applied: list[str] = []
    config = alembic_config(database_url)
    # Read by env.py: alembic calls it after each revision it applies.
    config.attributes["on_version_apply"] = lambda *, step, **_: applied.append(step.up_revision_id)
    command.upgrade(config, "heads")
    return applied


def migration_report(applied: list[str]) -> str:
    """What `payorch migrate` says: which revisions it applied, or that there was nothing to do."""
    if not applied:
        heads = ", ".join(sorted(head_revisions()))
        return f"the database is at the newest migration ({heads}); nothing to do"
    before = _down_revision(applied[0]) or "nothing (an empty database)"
    return f"migrated the database from {before} to {applied[-1]}: {len(applied)} revision(s) applied"


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

