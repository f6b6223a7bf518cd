"""The operator's administration commands: `applications list`, `keys list`, `keys create`,
`keys revoke`.

Each command runs the auth and applications domains' service functions in phases of its own
(bootstrap.operator_phases), as a request would: the same rules as the API (a key is shown only
when it is created; an application's last active key cannot be revoked). A refusal is one line
on stderr and exit status 1 (cli.main turns the service's ApiError into it); bad usage or
settings exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from payorch.access.scopes import SCOPES
from payorch.clock import SystemClock, isoformat, parse_rfc3339
from payorch.config import Settings

if TYPE_CHECKING:  # the database layer is imported only by the commands that use it
    from sqlalchemy.ext.asyncio import AsyncConnection

    from payorch.auth.service import Caller
    from payorch.db import Phases

T = TypeVar("T")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Every option's default in its help, and epilogs kept as written (one setting a line)."""


DATABASE_SETTINGS = """settings (environment variables; see docs/deployment.md):
  PAYORCH_DATABASE_URL  the database (default: sqlite:///./payorch.db)
  PAYORCH_SECRET_KEY    encrypts stored secrets (an embedded database makes its own key file)"""


def command(
    parent: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    text: str,
    settings: str = DATABASE_SETTINGS,
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A (sub)command whose --help shows its defaults and the settings that apply."""
    return parent.add_parser(
        name,
        help=text,
        description=description or text[0].upper() + text[1:] + ".",
        formatter_class=HelpFormatter,
        epilog=settings,
    )


def command_group(
    parent: argparse._SubParsersAction[argparse.ArgumentParser], name: str, text: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """A command of actions (`payorch keys list`): the actions' subparsers."""
    return command(parent, name, text).add_subparsers(required=True, metavar="ACTION")


def required_id(parser: argparse.ArgumentParser, flag: str, shape: str) -> None:
    """A required ``--flag ID`` option (``shape``: how such an id starts, e.g. app_...)."""
    parser.add_argument(
        flag, metavar="ID", help=f"{shape} (required)", required=True, default=argparse.SUPPRESS
    )


def json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def add_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    application_actions: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    listing = command(
        application_actions, "list", "list the applications, oldest first, with their merchants"
    )
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.set_defaults(handler=_applications_list)

    actions = command_group(commands, "keys", "list, create and revoke applications' API keys")
    create = command(
        actions,
        "create",
        "create an API key for an application (printed once)",
        settings=DATABASE_SETTINGS
        + "\n  PAYORCH_MAX_API_KEYS  the most active (unrevoked) keys an application may hold",
    )
    required_id(create, "--application", "app_...")
    create.add_argument("--name", help="a label shown when the keys are listed")
    create.add_argument(
        "--scope",
        action="append",
        dest="scopes",
        metavar="SCOPE",
        help="a scope the key holds; repeat it for several (none: every scope). The scopes: "
        + ", ".join(SCOPES),
    )
    create.add_argument(
        "--expires-at",
        type=rfc3339,
        metavar="TIME",
        help="when the key stops working, RFC 3339 with its zone (2026-12-31T23:59:59Z)",
    )
    json_flag(create)
    create.set_defaults(handler=_keys_create)

    listing_keys = command(
        actions, "list", "list an application's API keys, newest first (never the keys themselves)"
    )
    required_id(listing_keys, "--application", "app_...")
    json_flag(listing_keys)
    listing_keys.set_defaults(handler=_keys_list)

    revoke = command(
        actions,
        "revoke",
        "revoke an API key (not the application's last active one)",
        description=(
            "Revoke an API key: API processes refuse it within seconds (their key cache's"
            " lifetime). An application's last active key cannot be revoked: create its"
            " replacement first. Revoking a revoked key changes nothing."
        ),
    )
    revoke.add_argument("key_id", metavar="KEY_ID", help="key_... (as `keys list` shows it)")
    revoke.set_defaults(handler=_keys_revoke)


def rfc3339(text: str) -> datetime:
    moment = parse_rfc3339(text)
    if moment is None:
        raise argparse.ArgumentTypeError(
            f"{text!r}: an RFC 3339 time with its zone, such as 2026-12-31T23:59:59Z"
        )
    return moment


async def operator_caller(conn: AsyncConnection, application_id: str) -> Caller:
    """The operator acting as ``application_id``: the services' rules and scoping as for its API
    key (ResourceNotFound, one line, for an unknown id)."""
    from payorch.applications.service import find_application
    from payorch.auth.service import OPERATOR, Caller
    from payorch.errors import ResourceNotFound

    application = await find_application(conn, application_id)
    if application is None:
        raise ResourceNotFound(f"No application {application_id}.")
    return Caller(application.id, application.environment, credential_id=OPERATOR)


def run(settings: Settings, step: Callable[[Phases], Awaitable[T]]) -> T:
    """Run one command's steps with the command's Phases (an ApiError propagates)."""
    from payorch.bootstrap import operator_phases
    from payorch.db.migrate import upgrade

    # as `migrate` does: an older database gets the new tables
    upgrade(settings.database_url, transaction_pooling=settings.database_transaction_pooling)

    async def steps() -> T:
        async with operator_phases(settings) as phases:
            return await step(phases)

    return asyncio.run(steps())


def _applications_list(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.applications.service import ApplicationSummary, list_applications

    async def step(phases: Phases) -> list[ApplicationSummary]:
        async with phases.reading() as conn:
            return await list_applications(conn)

    listed = run(settings, step)
    items = [
        {
            "id": s.application.id,
            "name": s.application.name,
            "environment": s.application.environment,
            "created_at": isoformat(s.application.created_at),
            "merchant_account_ids": list(s.merchant_account_ids),
        }
        for s in listed
    ]
    if args.json:
        print(json.dumps({"items": items}))
    elif not items:
        print("No applications yet: payorch applications create --help")
    for item in [] if args.json else items:
        merchants = ", ".join(item["merchant_account_ids"]) or "-"
        print(f"{item['id']}  {item['environment']:<10}  {item['name']}  merchants: {merchants}")
    return 0


def _keys_create(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.auth.credentials import create_application_credential
    from payorch.auth.records import IssuedCredential
    from payorch.auth.schemas import issued_body

    async def step(phases: Phases) -> IssuedCredential:
        async with phases.transaction() as conn:
            return await create_application_credential(
                conn,
                SystemClock(),
                args.application,
                args.name,
                scopes=args.scopes,
                expires_at=args.expires_at,
                limit=settings.max_api_keys,
            )

    issued = run(settings, step)
    out = {**issued_body(issued), "application_id": issued.credential.application_id}
    if args.json:
        print(json.dumps(out))
        return 0
    for key in ("id", "application_id", "environment", "name", "api_key", "expires_at"):
        print(f"{key}: {out[key] if out[key] is not None else '-'}")
    scopes = out["scopes"]
    print(f"scopes: {', '.join(scopes) if isinstance(scopes, list) else 'every scope'}")
    print("The API key is shown only now; keep it.")
    return 0


def _keys_list(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.auth.credentials import list_credentials
    from payorch.auth.records import ApiCredential
    from payorch.auth.schemas import credential_body

    async def step(phases: Phases) -> tuple[str, list[ApiCredential]]:
        async with phases.reading() as conn:
            caller = await operator_caller(conn, args.application)
            listed: list[ApiCredential] = []
            cursor: str | None = None
            while True:  # every page: an application holds few keys
                page = await list_credentials(conn, caller, cursor, KEYS_PAGE)
                listed += page.items
                if (cursor := page.next_cursor) is None:
                    return caller.environment, listed

    environment, listed = run(settings, step)
    items = [credential_body(credential, environment) for credential in listed]
    if args.json:
        print(json.dumps({"items": items}))
        return 0
    for item in items:
        state = "revoked" if item["revoked_at"] is not None else "active"
        print(f"{item['id']}  {item['prefix']}  {state:<7}  {item['created_at']}  {item['name'] or '-'}")
    return 0


KEYS_PAGE = 100


def _keys_revoke(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.auth.credentials import revoke_any_credential
    from payorch.auth.records import ApiCredential

    async def step(phases: Phases) -> ApiCredential:
        return await revoke_any_credential(phases, SystemClock(), args.key_id)

    revoked = run(settings, step)
    already = " (it already was)" if revoked.revoked_at is not None else ""
    print(f"payorch: revoked {revoked.id} of {revoked.application_id}{already}")
    return 0
