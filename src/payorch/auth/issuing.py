"""Issue a new API key: the one place a credential is created, for the administration API
(credentials.py) and for a new application's first key (applications/service.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth import keys, repository
from payorch.auth.records import ApiCredential, IssuedCredential
from payorch.ids import new_id


async def issue_credential(
    conn: AsyncConnection,
    *,
    application_id: str,
    environment: str,
    name: str | None,
    at: datetime,
    scopes: list[str] | None = None,
    expires_at: datetime | None = None,
) -> IssuedCredential:
    """Stores the key's hash in the caller's transaction; the plain key is only in the answer."""
    key = keys.generate(environment)
    credential = ApiCredential(
        id=new_id("key"),
        application_id=application_id,
        name=name,
        prefix=key.prefix,
        secret_hash=key.secret_hash,
        created_at=at,
        revoked_at=None,
        scopes=scopes,
        expires_at=expires_at,
    )
    await repository.insert_credential(conn, credential)
    return IssuedCredential(credential, environment, key.api_key)
