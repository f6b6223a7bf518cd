"""Administration of an application's API keys: create (the key is shown once), list, revoke;
for the API (as the calling application) and for the operator's command line (any application).

Revocation is refused for the application's last active key (409 INVALID_STATE): an
application left without a key could not even call this API to create a new one. Create the
replacement first, then revoke. Revoking an already revoked key changes nothing (still 204).

A key may hold only some scopes (payorch.access.scopes; none given: every scope) and may
expire. A key never grants more than its creator holds: a caller with scopes creates keys whose
scopes are among its own (403 FORBIDDEN naming the first it lacks), so a restricted key cannot
mint an unrestricted one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.access.scopes import SCOPES
from payorch.activity.service import record_by
from payorch.applications import service as applications
from payorch.auth import repository
from payorch.auth.issuing import issue_credential
from payorch.auth.records import ApiCredential, IssuedCredential
from payorch.auth.service import OPERATOR, Authenticator, Caller
from payorch.clock import Clock, isoformat
from payorch.db import Phases
from payorch.errors import Forbidden, InvalidState, ResourceNotFound, ValidationFailed
from payorch.limits import refuse_at_cap
from payorch.pagination import Page, page_of


def checked_scopes(scopes: Sequence[str] | None) -> list[str] | None:
    """The scopes asked for, in the table's order (None: every scope). An unknown name, an
    empty list or a name given twice is 400 VALIDATION_ERROR: a typo must not silently make a
    key weaker or stronger than meant."""
    if scopes is None:
        return None
    if not scopes:
        raise ValidationFailed.field(
            "scopes", "must name at least one scope; leave it out for a key with every scope"
        )
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()
    for index, scope in enumerate(scopes):
        if scope not in SCOPES:
            known = ", ".join(SCOPES)
            problems.append((f"scopes[{index}]", f"unknown scope {scope!r}; the scopes are {known}"))
        elif scope in seen:
            problems.append((f"scopes[{index}]", f"{scope} is named twice; name each scope once"))
        seen.add(scope)
    if problems:
        raise ValidationFailed.listing(problems)
    return [scope for scope in SCOPES if scope in seen]


def checked_expiry(expires_at: datetime | None, now: datetime) -> datetime | None:
    if expires_at is not None and expires_at <= now:
        raise ValidationFailed.field("expires_at", "must be in the future")
    return expires_at


def refuse_more_than_held(caller: Caller, scopes: list[str] | None) -> None:
    """A key never grants more than its creator holds (403 FORBIDDEN naming the first scope the
    caller lacks, in the table's order)."""
    if caller.scopes is None:
        return
    for scope in scopes if scopes is not None else SCOPES:
        if scope not in caller.scopes:
            raise Forbidden(
                f"A key may not grant more than its creator holds: the caller lacks {scope}."
                + ("" if scopes is not None else " Name the scopes the key needs."),
                {"required_scope": scope},
            )


async def create_credential(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    name: str | None,
    *,
    scopes: Sequence[str] | None = None,
    expires_at: datetime | None = None,
    limit: int,
) -> IssuedCredential:
    """``scopes`` None: every scope; ``limit``: the most active keys an application may hold
    (PAYORCH_MAX_API_KEYS)."""
    listed = checked_scopes(scopes)
    expiry = checked_expiry(expires_at, clock.now())
    refuse_more_than_held(caller, listed)
    return await _issue(conn, clock, caller, name, listed, expiry, limit)


async def create_application_credential(
    conn: AsyncConnection,
    clock: Clock,
    application_id: str,
    name: str | None,
    *,
    scopes: Sequence[str] | None = None,
    expires_at: datetime | None = None,
    limit: int,
) -> IssuedCredential:
    """A new key for any application (the operator's command line), within the same cap."""
    listed = checked_scopes(scopes)
    expiry = checked_expiry(expires_at, clock.now())
    application = await applications.find_application(conn, application_id)
    if application is None:
        raise ResourceNotFound(f"No application {application_id}.")
    operator = Caller(application.id, application.environment, OPERATOR)
    return await _issue(conn, clock, operator, name, listed, expiry, limit)


async def _issue(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    name: str | None,
    scopes: list[str] | None,
    expires_at: datetime | None,
    limit: int,
) -> IssuedCredential:
    """Issue the key and log it (api_key.created, by ``caller``), in ``conn``'s transaction."""
    await refuse_at_cap(
        conn,
        caller.application_id,
        repository.count_active,
        limit=limit,
        what="active API keys",
        remedy="Revoke a key it no longer uses, then create this one.",
    )
    issued = await issue_credential(
        conn,
        application_id=caller.application_id,
        environment=caller.environment,
        name=name,
        at=clock.now(),
        scopes=scopes,
        expires_at=expires_at,
    )
    changes: dict[str, object] = {
        "name": name,
        "scopes": scopes,
        "expires_at": isoformat(expires_at) if expires_at is not None else None,
        "secret": "shown once",  # never the key
    }
    await record_by(conn, clock, caller, "api_key.created", ("api_key", issued.credential.id), changes)
    return issued


async def list_credentials(
    conn: AsyncConnection, caller: Caller, cursor: str | None, limit: int
) -> Page[ApiCredential]:
    """The application's keys, newest first, revoked ones included."""
    found = await repository.list_credentials(conn, caller.application_id, before=cursor, limit=limit + 1)
    return page_of(found, limit, lambda item: item.id)


async def revoke_credential(
    phases: Phases,
    clock: Clock,
    authenticator: Authenticator,
    caller: Caller,
    credential_id: str,
) -> None:
    """Two steps: the revocation commits, then this process's cache forgets the key. Forgetting
    before the commit would let a concurrent request cache the key again as still valid."""
    revoked = await revoke_application_credential(phases, clock, caller, credential_id)
    # After the commit: this process refuses the key at once (others within the cache's TTL).
    if revoked is not None:
        authenticator.forget(revoked.prefix)


async def revoke_any_credential(phases: Phases, clock: Clock, credential_id: str) -> ApiCredential:
    """Revoke a key of whichever application holds it (the operator's command line, a process
    of its own: API processes refuse the key within their cache's TTL). Returns the key."""
    async with phases.reading() as conn:
        credential = await repository.get_credential(conn, None, credential_id)
        holder = None
        if credential is not None:
            holder = await applications.find_application(conn, credential.application_id)
    if credential is None or holder is None:
        raise ResourceNotFound(f"No API credential {credential_id}.")
    operator = Caller(holder.id, holder.environment, OPERATOR)  # the "system" actor
    await revoke_application_credential(phases, clock, operator, credential_id)
    return credential


async def revoke_application_credential(
    phases: Phases, clock: Clock, caller: Caller, credential_id: str
) -> ApiCredential | None:
    """Revoke a key of ``caller``'s application in one transaction, with its activity entry
    (api_key.revoked, by ``caller``); the key if this call revoked it, None if it already was."""
    application_id = caller.application_id
    async with phases.transaction() as conn:
        await applications.lock_application(conn, application_id)
        credential = await repository.get_credential(conn, application_id, credential_id)
        if credential is None:
            raise ResourceNotFound(f"No API credential {credential_id}.")
        if credential.revoked_at is not None:
            return None
        if await repository.count_active(conn, application_id) <= 1:
            raise InvalidState(
                "ACTIVE",
                "This is the application's last active API key; create another one first.",
                allowed=(),  # not about the key's status: the message says what to do
            )
        await repository.revoke(conn, application_id, credential_id, clock.now())
        changes: dict[str, object] = {"name": credential.name, "prefix": credential.prefix}
        await record_by(conn, clock, caller, "api_key.revoked", ("api_key", credential_id), changes)
    return credential
