"""`payorch connectors list|add|set|remove`: a merchant account's provider configurations, through
the connectors service as the API's /v1/admin/merchant-accounts/{id}/connectors (same rules:
MOCK only for SANDBOX applications, PRODUCTION only for PRODUCTION ones; a connector that took
payments is disabled, not removed).

Providers and their credential fields come from the provider registry. Credentials are read
from a prompt that does not echo, from stdin (NAME=VALUE lines) or from --credential; they are
never printed: the output says only whether a connector has them.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from payorch.admin_cli import command, command_group, json_flag, operator_caller, required_id, run
from payorch.config import Settings
from payorch.errors import ResourceNotFound, ValidationFailed, validator_message
from payorch.providers.registry import PROVIDER_IDS, REGISTRATIONS, registration_of

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from payorch.auth.service import Caller
    from payorch.connectors.schemas import ConnectorResponse
    from payorch.db import Phases

ModelT = TypeVar("ModelT", bound=BaseModel)
MODES = ("MOCK", "SANDBOX", "PRODUCTION")
FIELDS_HELP = "; ".join(f"{r.provider_id}: {', '.join(r.credential_fields)}" for r in REGISTRATIONS)


def add_connector_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = command_group(commands, "connectors", "configure a merchant's providers")

    listing = command(actions, "list", "list a merchant's connectors, best priority first")
    _merchant(listing)
    json_flag(listing)
    listing.set_defaults(handler=_list)

    add = command(
        actions,
        "add",
        "configure a provider for a merchant",
        description=(
            "Configure a provider for a merchant. SANDBOX and PRODUCTION modes need the"
            f" provider's credentials ({FIELDS_HELP}): asked for without echo when stdin is a"
            " terminal, else read from stdin with --credentials-stdin, or given with --credential."
        ),
    )
    _merchant(add)
    add.add_argument(
        "--provider", choices=PROVIDER_IDS, required=True, default=argparse.SUPPRESS, help="(required)"
    )
    add.add_argument("--mode", choices=MODES, required=True, default=argparse.SUPPRESS, help="(required)")
    add.add_argument(
        "--enabled", action=argparse.BooleanOptionalAction, default=True, help="route payments to it"
    )
    add.add_argument("--priority", type=int, default=1, help="lower wins")
    _credential_options(add)
    add.set_defaults(handler=_add)

    change = command(
        actions,
        "set",
        "change a connector's mode, enabled, priority or credentials",
        description=(
            "Change a connector: only the options given change. New credentials replace all of"
            " the old ones: --prompt-credentials asks for each field without echo."
        ),
    )
    _merchant(change)
    change.add_argument(
        "connector_id", metavar="CONNECTOR_ID", help="cfg_... (as `connectors list` shows it)"
    )
    change.add_argument("--mode", choices=MODES, help="unset: unchanged")
    change.add_argument("--enabled", action=argparse.BooleanOptionalAction, help="unset: unchanged")
    change.add_argument("--priority", type=int, help="lower wins; unset: unchanged")
    _credential_options(change)
    change.add_argument(
        "--prompt-credentials", action="store_true", help="ask for new credentials without echo"
    )
    change.set_defaults(handler=_set)

    remove = command(
        actions,
        "remove",
        "remove a connector that has taken no payment (else disable it)",
    )
    _merchant(remove)
    remove.add_argument("connector_id", metavar="CONNECTOR_ID", help="cfg_...")
    remove.set_defaults(handler=_remove)


def _merchant(parser: argparse.ArgumentParser) -> None:
    required_id(parser, "--merchant", "mrc_...")


def _credential_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--credential",
        action="append",
        metavar="NAME=VALUE",
        default=[],
        help="one credential field (repeat per field); a command line is seen by other local"
        " users' `ps`: prefer the prompt or --credentials-stdin",
    )
    parser.add_argument("--credentials-stdin", action="store_true", help="read NAME=VALUE lines from stdin")
    json_flag(parser)


def _credentials(args: argparse.Namespace, provider: str, *, ask: bool) -> dict[str, str] | None:
    """The credentials given (--credential, then stdin), or asked for when ``ask``; None if none."""
    given = dict(_pair(text) for text in args.credential)
    if args.credentials_stdin:
        given.update(_pair(line) for line in sys.stdin.read().splitlines() if line.strip())
    if given or not ask:
        return given or None
    if not sys.stdin.isatty():
        raise ValidationFailed.field(
            "credentials",
            f"required; give each of {', '.join(registration_of(provider).credential_fields)}"
            " with --credential NAME=VALUE or as NAME=VALUE lines with --credentials-stdin",
        )
    fields = registration_of(provider).credentials.model_fields
    typed = {
        name: getpass.getpass(f"{provider} {name} ({field.description or 'credential'}): ")
        for name, field in fields.items()
    }
    # A setting left blank keeps its default (provider A's capture: immediate).
    return {name: value for name, value in typed.items() if value or fields[name].is_required()}


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        # The value is not repeated: it may be a secret.
        raise ValidationFailed.field("credentials", "expected NAME=VALUE")
    return name.strip(), value.strip()


async def _merchant_caller(conn: AsyncConnection, merchant_id: str) -> Caller:
    from payorch.applications.service import list_applications

    for summary in await list_applications(conn):  # an installation has few applications
        if merchant_id in summary.merchant_account_ids:
            return await operator_caller(conn, summary.application.id)
    raise ResourceNotFound(f"No merchant account {merchant_id}.")


def _request(model: type[ModelT], values: Mapping[str, object]) -> ModelT:
    """The API's request model, checked as the API checks it."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ValidationFailed.listing(
            [(".".join(str(part) for part in e["loc"]), validator_message(e["msg"])) for e in exc.errors()]
        ) from None


def _list(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.connectors.service import list_connectors

    async def step(phases: Phases) -> list[ConnectorResponse]:
        async with phases.reading() as conn:
            caller = await _merchant_caller(conn, args.merchant)
            return (await list_connectors(conn, caller, args.merchant)).items

    items = run(settings, step)
    if args.json:
        print(json.dumps({"items": [item.model_dump() for item in items]}))
        return 0
    for item in items:
        state = "enabled" if item.enabled else "disabled"
        keys = "credentials set" if item.has_credentials else "no credentials"
        print(f"{item.id}  {item.provider}  {item.mode:<10}  {state:<8}  priority {item.priority}  {keys}")
    return 0


def _add(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.clock import SystemClock
    from payorch.connectors.schemas import CreateConnector
    from payorch.connectors.service import create_connector
    from payorch.crypto import load_cipher

    credentials = _credentials(args, args.provider, ask=args.mode != "MOCK")
    request = _request(
        CreateConnector,
        {
            "provider": args.provider,
            "mode": args.mode,
            "enabled": args.enabled,
            "priority": args.priority,
            "credentials": credentials,
        },
    )
    cipher = load_cipher(settings)

    async def step(phases: Phases) -> ConnectorResponse:
        async with phases.transaction() as conn:
            caller = await _merchant_caller(conn, args.merchant)
            return await create_connector(conn, SystemClock(), cipher, caller, args.merchant, request)

    return _show(run(settings, step), args.json, "added")


def _set(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.clock import SystemClock
    from payorch.connectors.schemas import UpdateConnector
    from payorch.connectors.service import update_connector
    from payorch.crypto import load_cipher

    cipher = load_cipher(settings)

    async def step(phases: Phases) -> ConnectorResponse:
        async with phases.reading() as conn:
            caller = await _merchant_caller(conn, args.merchant)
            provider = await _provider_of(conn, caller, args.merchant, args.connector_id)
        changes = {
            name: value
            for name, value in (("mode", args.mode), ("enabled", args.enabled), ("priority", args.priority))
            if value is not None
        }
        credentials = _credentials(args, provider, ask=args.prompt_credentials)
        if credentials is not None:
            changes["credentials"] = credentials
        request = _request(UpdateConnector, changes)
        async with phases.transaction() as conn:
            return await update_connector(
                conn, SystemClock(), cipher, caller, args.merchant, args.connector_id, request
            )

    return _show(run(settings, step), args.json, "changed")


async def _provider_of(conn: AsyncConnection, caller: Caller, merchant_id: str, connector_id: str) -> str:
    """The connector's provider (whose credential fields a prompt asks for)."""
    from payorch.connectors.service import list_connectors

    for item in (await list_connectors(conn, caller, merchant_id)).items:
        if item.id == connector_id:
            return item.provider
    raise ResourceNotFound(f"No connector {connector_id}.")


def _remove(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.clock import SystemClock
    from payorch.connectors.service import remove_connector

    async def step(phases: Phases) -> str:
        async with phases.transaction() as conn:
            caller = await _merchant_caller(conn, args.merchant)
            removed = await remove_connector(conn, SystemClock(), caller, args.merchant, args.connector_id)
            return removed.provider

    provider = run(settings, step)
    print(f"payorch: removed {args.connector_id} ({provider}) of {args.merchant}")
    return 0


def _show(item: ConnectorResponse, as_json: bool, done: str) -> int:
    if as_json:
        print(json.dumps(item.model_dump()))
        return 0
    keys = "credentials set" if item.has_credentials else "no credentials"
    print(
        f"payorch: {done} {item.id}: {item.provider} {item.mode},"
        f" {'enabled' if item.enabled else 'disabled'}, priority {item.priority}, {keys}"
    )
    return 0
