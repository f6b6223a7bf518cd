"""`payorch secret-key reencrypt`: every stored secret under the first key of
PAYORCH_SECRET_KEY (payorch.secret_rotation). Prints a line per place with its counts, never a
value; exit status 0 when every value is under the first key, 1 when one is left (each such
row named on stderr by its id: decrypted by no key of the list, or changing at every try)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from payorch.admin_cli import DATABASE_SETTINGS, command, command_group, run
from payorch.config import Settings

if TYPE_CHECKING:
    from payorch.db import Phases
    from payorch.secret_rotation import Tally

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
