"""Administration of an application's API keys: create (the key is shown once), list, revoke.

Revocation is refused for the application's last active key (409 INVALID_STATE): an
application left without a key could not even call this API to create a new one. Create the
replacement first, then revoke. Revoking an already revoked key changes nothing (still 204).
"""

from __future__ import annotations

from typing import Any

from payorch.auth import keys, repository
from payorch.auth.schemas import CreateApiCredential, credential_body
from payorch.auth.service import Caller
from payorch.clock import isoformat
from payorch.errors import InvalidState, ResourceNotFound
from payorch.ids import new_id
from payorch.runtime import Runtime


async def create_credential(
    runtime: Runtime, caller: Caller, request: CreateApiCredential
) -> dict[str, Any]:
    now = runtime.clock.now()
    key = keys.generate(caller.environment)
    credential_id = new_id("key")
    async with runtime.database.transaction() as conn:
        await repository.insert_credential(
            conn,
            credential_id=credential_id,
            application_id=caller.application_id,
            name=request.name,
            prefix=key.prefix,
            secret_hash=key.secret_hash,
            created_at=now,
        )
    return {
        "id": credential_id,
        "name": request.name,
        "prefix": key.prefix,
        "environment": caller.environment,
        "api_key": key.api_key,
        "created_at": isoformat(now),
    }


async def list_credentials(runtime: Runtime, caller: Caller) -> dict[str, Any]:
    async with runtime.database.engine.connect() as conn:
        rows = await repository.list_credentials(conn, caller.application_id)
    return {"items": [credential_body(row, caller.environment) for row in rows]}


async def revoke_credential(runtime: Runtime, caller: Caller, credential_id: str) -> None:
    async with runtime.database.transaction() as conn:
        await repository.lock_application(conn, caller.application_id)
        row = await repository.get_credential(conn, caller.application_id, credential_id)
        if row is None:
            raise ResourceNotFound(f"No API credential {credential_id}.")
        if row.revoked_at is not None:
            return
        if await repository.count_active(conn, caller.application_id) <= 1:
            raise InvalidState(
                "ACTIVE",
                "This is the application's last active API key; create another one first.",
            )
        await repository.revoke(conn, caller.application_id, credential_id, runtime.clock.now())
    # After the commit: this process refuses the key at once (others within the cache's TTL).
    runtime.authenticator.forget(row.prefix)
