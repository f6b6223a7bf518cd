"""`payorch activity verify [--application-id app_...]`: walk each application's activity chain
(payorch.activity.verification) and say how many entries matched, or name the first that does
not. Exit status 0 when every chain matched, 1 when one did not (each broken chain one line on
stderr), as a refusal is."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from payorch.admin_cli import command, command_group, run
from payorch.config import Settings
from payorch.errors import ResourceNotFound

if TYPE_CHECKING:
    from payorch.db import Phases


def add_activity_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = command_group(commands, "activity", "check the activity log")
    verify = command(
        actions,
        "verify",
        "verify the activity log's hash chains",
        description=(
            "Walk each application's activity log in seq order, recompute every entry's hash,"
            " check that each links to the one before it with no seq missing and that the chain"
            " ends at its head; print per application how many entries matched and the head's"
            " hash (publish it: a later run can then show the log was not rewritten), or name"
            " the first entry that does not match and exit 1 (docs/access.md, Activity log)."
        ),
    )
    verify.add_argument("--application-id", metavar="ID", help="app_... (unset: every application)")
    verify.set_defaults(handler=_verify)


def _verify(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.activity.verification import Broken, verify

    async def step(phases: Phases) -> bool:
        intact = True
        checked = 0
        async for result in verify(phases.reading, args.application_id):
            checked += 1
            if isinstance(result, Broken):
                intact = False
                entry = result.entry_id or "(missing)"
                print(
                    f"payorch: {result.application_id}: entry {entry} (seq {result.seq}):"
                    f" {result.problem}: {result.detail}",
                    file=sys.stderr,
                    flush=True,
                )
            else:
                span = f", seq {result.first_seq} to {result.head.seq}" if result.entries else ""
                print(
                    f"payorch: {result.application_id}: {result.entries} entries verified{span};"
                    f" head seq {result.head.seq} hash {result.head.hash}",
                    flush=True,
                )
        if checked == 0 and args.application_id is not None:
            raise ResourceNotFound(f"No application {args.application_id}.")
        return intact

    return 0 if run(settings, step) else 1
