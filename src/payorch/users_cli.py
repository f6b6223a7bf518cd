"""The operator's `users` commands: invite, list, set-role, disable, enable, remove, reinvite
(docs/access.md, "People").

Each runs payorch.users' service as the operator's command line (admin_cli.operator_caller): the
API's rules apply (an email once per application, PAYORCH_MAX_USERS, the last active owner
stays), and the operator may make, change and remove owners, which is how an application with
no user yet (a database upgraded to migration 0024) gets its first owner. A refusal is one line
on stderr and exit status 1; bad usage exits 2.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from payorch.access.roles import ROLES
from payorch.admin_cli import DATABASE_SETTINGS, command, command_group, json_flag, operator_caller, run
from payorch.clock import SystemClock
from payorch.config import Settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from payorch.auth.service import Caller
    from payorch.db import Phases
    from payorch.users.records import User

USERS_PAGE = 100
INVITE_SETTINGS = (
    DATABASE_SETTINGS
    + "\n  PAYORCH_PUBLIC_URL    the invite URL starts with it (the dashboard's address)"
    + "\n  PAYORCH_MAX_USERS     the most users an application may hold"
)


def add_users_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = command_group(commands, "users", "invite and manage the people of an application")

    invite = command(
        actions,
        "invite",
        "invite a person with a role; prints their invite URL (once)",
        settings=INVITE_SETTINGS,
        description=(
            "Invite a person: prints the invite URL that sets their password (it works once,"
            " for 72 hours). An application upgraded to migration 0024 has no user yet: invite"
            " its owner this way."
        ),
    )
    _application(invite)
    invite.add_argument("--email", required=True, default=argparse.SUPPRESS, help="(required)")
    _role(invite)
    json_flag(invite)
    invite.set_defaults(handler=_invite)

    listing = command(actions, "list", "list an application's users, newest first")
    _application(listing)
    json_flag(listing)
    listing.set_defaults(handler=_list)

    set_role = command(
        actions,
        "set-role",
        "change a user's role (their dashboard sessions end)",
        description="Change a user's role; the application's last active owner cannot be demoted.",
    )
    _target(set_role)
    _role(set_role)
    json_flag(set_role)
    set_role.set_defaults(handler=_set_role)

    for name, text, handler in (
        ("disable", "disable a user: they cannot sign in, their sessions end", _disable),
        ("enable", "enable a disabled user again", _enable),
        ("remove", "remove a user (not the application's last active owner)", _remove),
        ("reinvite", "print a new invite URL for an INVITED user (the old one stops working)", _reinvite),
    ):
        parser = command(
            actions, name, text, settings=INVITE_SETTINGS if name == "reinvite" else DATABASE_SETTINGS
        )
        _target(parser)
        json_flag(parser)
        parser.set_defaults(handler=handler)


def _application(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--application-id", metavar="ID", help="app_... (required)", required=True, default=argparse.SUPPRESS
    )


def _role(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--role", choices=ROLES, required=True, default=argparse.SUPPRESS, help="(required)")


def _target(parser: argparse.ArgumentParser) -> None:
    _application(parser)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--user-id", metavar="ID", help="usr_...")
    which.add_argument("--email", help="the user's email instead of the id")


def _print_user(body: dict[str, object], as_json: bool, note: str | None = None) -> None:
    if as_json:
        print(json.dumps(body))
        return
    for key in ("id", "email", "role", "status", "invite_url"):
        if key in body:
            print(f"{key}: {body[key]}")
    if note:
        print(note)


def _invited_note(email: str) -> str:
    return f"The invite URL is shown only now; it works once, for 72 hours: send it to {email}."


def _invite(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.users import service
    from payorch.users.invites import invite_url
    from payorch.users.schemas import invited_body

    async def step(phases: Phases) -> tuple[User, str]:
        async with phases.transaction() as conn:
            caller = await operator_caller(conn, args.application_id)
            return await service.invite(
                conn, SystemClock(), caller, args.email, args.role, limit=settings.max_users
            )

    user, token = run(settings, step)
    body = invited_body(user, invite_url(settings.public_url, token))
    _print_user(body, args.json, _invited_note(user.email))
    return 0


def _list(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.users import service
    from payorch.users.schemas import user_body

    async def step(phases: Phases) -> list[User]:
        async with phases.reading() as conn:
            caller = await operator_caller(conn, args.application_id)
            listed: list[User] = []
            cursor: str | None = None
            while True:  # every page: an application holds at most PAYORCH_MAX_USERS
                page = await service.list_users(conn, caller, cursor, USERS_PAGE)
                listed += page.items
                if (cursor := page.next_cursor) is None:
                    return listed

    items = [user_body(user) for user in run(settings, step)]
    if args.json:
        print(json.dumps({"items": items}))
        return 0
    if not items:
        print(
            f"No users yet: payorch users invite --application-id {args.application_id}"
            " --email EMAIL --role owner"
        )
    for item in items:
        print(f"{item['id']}  {item['role']:<9}  {item['status']:<8}  {item['email']}")
    return 0


Change = Callable[["AsyncConnection", "Caller", str], Awaitable["User"]]


def _changed(settings: Settings, args: argparse.Namespace, change: Change) -> User:
    """Find the user (--user-id or --email) of --application-id and apply ``change`` to them, in
    one transaction."""
    from payorch.errors import ResourceNotFound
    from payorch.users import service

    async def step(phases: Phases) -> User:
        async with phases.transaction() as conn:
            caller = await operator_caller(conn, args.application_id)
            if args.user_id is not None:
                user_id = args.user_id
            else:
                found = await service.find_by_email(conn, caller.application_id, args.email)
                if found is None:
                    raise ResourceNotFound(f"No user {args.email} in {caller.application_id}.")
                user_id = found.id
            return await change(conn, caller, user_id)

    return run(settings, step)


def _set_role(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.users import service
    from payorch.users.schemas import user_body

    async def change(conn: AsyncConnection, caller: Caller, user_id: str) -> User:
        return await service.set_role(conn, SystemClock(), caller, user_id, args.role)

    _print_user(user_body(_changed(settings, args, change)), args.json)
    return 0


def _disable(settings: Settings, args: argparse.Namespace) -> int:
    return _set_disabled(settings, args, disabled=True)


def _enable(settings: Settings, args: argparse.Namespace) -> int:
    return _set_disabled(settings, args, disabled=False)


def _set_disabled(settings: Settings, args: argparse.Namespace, *, disabled: bool) -> int:
    from payorch.users import service
    from payorch.users.schemas import user_body

    async def change(conn: AsyncConnection, caller: Caller, user_id: str) -> User:
        return await service.set_disabled(conn, SystemClock(), caller, user_id, disabled)

    _print_user(user_body(_changed(settings, args, change)), args.json)
    return 0


def _remove(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.users import service
    from payorch.users.schemas import user_body

    async def change(conn: AsyncConnection, caller: Caller, user_id: str) -> User:
        return await service.remove(conn, SystemClock(), caller, user_id)

    removed = _changed(settings, args, change)
    if args.json:
        print(json.dumps({**user_body(removed), "removed": True}))
    else:
        print(f"payorch: removed {removed.id} ({removed.email}) from {removed.application_id}")
    return 0


def _reinvite(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.users import service
    from payorch.users.invites import invite_url
    from payorch.users.schemas import invited_body

    tokens: list[str] = []

    async def change(conn: AsyncConnection, caller: Caller, user_id: str) -> User:
        user, token = await service.renew_invite(conn, SystemClock(), caller, user_id)
        tokens.append(token)
        return user

    user = _changed(settings, args, change)
    body = invited_body(user, invite_url(settings.public_url, tokens[0]))
    _print_user(body, args.json, _invited_note(user.email))
    return 0
