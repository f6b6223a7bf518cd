"""Administration of an application's API keys: create (the key is shown once), list, revoke.

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


async def create_credential(
    conn: AsyncConnection, clock: Clock, caller: Caller, name: str | None
) -> IssuedCredential:
    return await issue_credential(
        conn,
        application_id=caller.application_id,
        environment=caller.environment,
        name=name,
        at=clock.now(),
    )


async def list_credentials(conn: AsyncConnection, caller: Caller) -> list[ApiCredential]:
    return await repository.list_credentials(conn, caller.application_id)


async def revoke_credential(
    phases: Phases,
    clock: Clock,
    authenticator: Authenticator,
    caller: Caller,
    credential_id: str,
) -> None:
    """Two steps: the revocation commits, then this process's cache forgets the key. Forgetting
    before the commit would let a concurrent request cache the key again as still valid."""
    async with phases.transaction() as conn:
        await applications.lock_application(conn, caller.application_id)
        credential = await repository.get_credential(conn, caller.application_id, credential_id)
        if credential is None:
            raise ResourceNotFound(f"No API credential {credential_id}.")
        if credential.revoked_at is not None:
            return
        if await repository.count_active(conn, caller.application_id) <= 1:
            raise InvalidState(
                "ACTIVE",
                "This is the application's last active API key; create another one first.",
            )
        await repository.revoke(conn, caller.application_id, credential_id, clock.now())
    # After the commit: this process refuses the key at once (others within the cache's TTL).
    authenticator.forget(credential.prefix)
