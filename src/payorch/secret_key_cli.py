"""`payorch secret-key reencrypt`: every stored secret under the first key of
PAYORCH_SECRET_KEY (payorch.secret_rotation). Prints a line per place with its counts, never a
value; exit status 0 when every value is under the first key, 1 when one is left (each such
row named on stderr by its id: decrypted by no key of the list, or changing at every try).

refuse_a_wrong_key is the check `serve` and `worker` make as they start: a key list that
decrypts none of the stored values (a restored backup started with another key) is one line
and exit status 2 (cli_guard), before anything is served."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError

from payorch.admin_cli import DATABASE_SETTINGS, command, command_group, run
from payorch.config import Settings, SettingsError
from payorch.errors import DatabaseUnavailable

if TYPE_CHECKING:
    from payorch.db import Phases
    from payorch.secret_rotation import Place, Tally

SETTINGS = (
    DATABASE_SETTINGS
    + """
                        here: NEW,OLD (the first key encrypts, every key decrypts)"""
)


def add_secret_key_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = command_group(commands, "secret-key", "rotate PAYORCH_SECRET_KEY")
    reencrypt = command(
        actions,
        "reencrypt",
        "re-encrypt every stored secret under the first key of PAYORCH_SECRET_KEY",
        SETTINGS,
        description=(
            "Re-encrypt every value payorch stores encrypted (connectors' credentials, webhook"
            " endpoints' secrets, people's TOTP secrets, TOTP enrollments in progress) under the"
            " first key of PAYORCH_SECRET_KEY, decrypting each with whichever key of the list"
            " works. Each value is its own short transaction: the service keeps running, and a"
            " run that stops half-way is finished by running it again (values already under the"
            " first key are skipped). Values are never printed (docs/deployment.md, Rotating"
            " PAYORCH_SECRET_KEY)."
        ),
    )
    reencrypt.set_defaults(handler=_reencrypt)


def refuse_a_wrong_key(settings: Settings) -> None:
    """Raise SettingsError when PAYORCH_SECRET_KEY does not decrypt what the database stores
    (secret_rotation.first_unreadable): a start with another key, e.g. on a restored backup."""
    from payorch.bootstrap import operator_phases
    from payorch.crypto import load_cipher
    from payorch.secret_rotation import first_unreadable

    cipher = load_cipher(settings)

    async def check() -> tuple[Place, str] | None:
        async with operator_phases(settings) as phases:
            return await first_unreadable(phases, cipher)

    try:
        found = asyncio.run(check())
    except (DBAPIError, OSError, DatabaseUnavailable):
        # Not readable now (not migrated yet, or down): the process meets that as it did
        # before this check, which only refuses what it could read.
        return
    if found is not None:
        place, row_id = found
        raise SettingsError(
            f"PAYORCH_SECRET_KEY: no key of it decrypts the stored secrets ({place.name} of"
            f" {row_id}): start with the key this database was written with (a restored backup"
            " needs its original key; docs/deployment.md, Backups and restore)"
        )


def _reencrypt(settings: Settings, _args: argparse.Namespace) -> int:
    from payorch.crypto import load_cipher
    from payorch.secret_rotation import Outcome, reencrypt_all

    cipher = load_cipher(settings)

    async def step(phases: Phases) -> list[Tally]:
        return await reencrypt_all(phases, cipher)

    tallies = run(settings, step)
    left = False
    for tally in tallies:
        counts = ", ".join(f"{count} {outcome.value}" for outcome, count in tally.counts.items() if count)
        print(f"payorch: {tally.place.name}: {counts or 'nothing stored'}", flush=True)
        for row_id, outcome in tally.left:
            left = True
            unreadable = outcome is Outcome.UNREADABLE
            why = "no key of PAYORCH_SECRET_KEY decrypts it" if unreadable else outcome.value
            print(f"payorch: {tally.place.name} of {row_id}: left as it was: {why}", file=sys.stderr)
    if left:
        return 1
    print("payorch: every stored secret is under the first key of PAYORCH_SECRET_KEY", flush=True)
    return 0
