"""Administration of an application's API keys: create (the key is shown once), list, revoke;
for the API (as the calling application) and for the operator's command line (any application).

Revocation is refused for the application's last active key (409 INVALID_STATE): an
application left without a key could not even call this API to create a new one. Create the
replacement first, then revoke. Revoking an already revoked key changes nothing (still 204).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import service as applications
from payorch.auth import repository
from payorch.auth.issuing import issue_credential
from payorch.auth.records import ApiCredential, IssuedCredential
from payorch.auth.service import Authenticator, Caller
from payorch.clock import Clock
from payorch.db import Phases
from payorch.errors import InvalidState, ResourceNotFound
from payorch.limits import refuse_at_cap
from payorch.pagination import Page, page_of


async def create_credential(
    conn: AsyncConnection, clock: Clock, caller: Caller, name: str | None, *, limit: int
) -> IssuedCredential:
    """``limit``: the most active keys an application may hold (PAYORCH_MAX_API_KEYS)."""
    return await _issue(conn, clock, caller.application_id, caller.environment, name, limit)


async def create_application_credential(
    conn: AsyncConnection, clock: Clock, application_id: str, name: str | None, *, limit: int
) -> IssuedCredential:
    """A new key for any application (the operator's command line), within the same cap."""
    application = await applications.find_application(conn, application_id)
    if application is None:
        raise ResourceNotFound(f"No application {application_id}.")
    return await _issue(conn, clock, application.id, application.environment, name, limit)


async def _issue(
    conn: AsyncConnection,
    clock: Clock,
    application_id: str,
    environment: str,
    name: str | None,
    limit: int,
) -> IssuedCredential:
    await refuse_at_cap(
        conn,
        application_id,
        repository.count_active,
        limit=limit,
        what="active API keys",
        remedy="Revoke a key it no longer uses, then create this one.",
    )
    return await issue_credential(
        conn, application_id=application_id, environment=environment, name=name, at=clock.now()
    )


async def list_credentials(
    conn: AsyncConnection, caller: Caller, cursor: str | None, limit: int
) -> Page[ApiCredential]:
    """The application's keys, newest first, revoked ones included."""
    found = await repository.list_credentials(
        conn, caller.application_id, before=cursor, limit=limit + 1
    )
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
    revoked = await revoke_application_credential(
        phases, clock, caller.application_id, credential_id
    )
    # After the commit: this process refuses the key at once (others within the cache's TTL).
    if revoked is not None:
        authenticator.forget(revoked.prefix)


async def revoke_any_credential(phases: Phases, clock: Clock, credential_id: str) -> ApiCredential:
    """Revoke a key of whichever application holds it (the operator's command line, a process
    of its own: API processes refuse the key within their cache's TTL). Returns the key."""
    async with phases.reading() as conn:
        credential = await repository.get_credential(conn, None, credential_id)
    if credential is None:
        raise ResourceNotFound(f"No API credential {credential_id}.")
    await revoke_application_credential(phases, clock, credential.application_id, credential_id)
    return credential


async def revoke_application_credential(
    phases: Phases, clock: Clock, application_id: str, credential_id: str
) -> ApiCredential | None:
    """Revoke in one transaction; the key if this call revoked it, None if it already was."""
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
    return credential
