"""The typed client's restricted keys against the app on SQLite and PostgreSQL: create with
scopes and an expiry, read them back in the list; a call outside the key's scopes is the
client's PermissionDeniedError with details.required_scope."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from payorch.app import create_app
from payorch.client import ApiCredential, AsyncPayorchClient, PermissionDeniedError
from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.kit import Sandbox


async def test_the_client_makes_a_restricted_expiring_key(
    runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    expiry = (clock.now() + timedelta(days=1)).replace(microsecond=0)
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as client:
        made = await client.create_api_credential(name="reader", scopes=["payments:read"], expires_at=expiry)
        assert isinstance(made, ApiCredential) and made.api_key is not None
        assert made.scopes == ["payments:read"] and made.expires_at == expiry
        [listed] = [k async for k in client.iter_api_credentials() if k.id == made.id]
        assert listed.scopes == ["payments:read"] and listed.last_used_at is None
    key = made.api_key.get_secret_value()
    async with AsyncPayorchClient(key, "http://testserver", transport=transport) as restricted:
        assert (await restricted.list_payments()).items == []
        with pytest.raises(PermissionDeniedError) as refused:
            await restricted.list_api_credentials()
        assert refused.value.details == {"required_scope": "api_keys:read"}
