"""The typed client's users calls against the app on SQLite and PostgreSQL: invite (the URL once,
masked), list and iterate, read, change role, disable, invite again, remove; an error is the
client's typed error."""

from __future__ import annotations

import httpx
import pytest

from payorch.app import create_app
from payorch.client import AsyncPayorchClient, InvalidStateError, NotFoundError, User
from payorch.runtime import Runtime
from tests.kit import Sandbox


async def test_the_client_manages_people(runtime: Runtime, sandbox: Sandbox) -> None:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as client:
        ana = await client.invite_user(email="ana@example.com", role="viewer")
        assert isinstance(ana, User) and ana.status == "INVITED" and ana.invite_url is not None
        assert "/dashboard/invite/" not in repr(ana)  # a secret: masked
        assert ana.invite_url.get_secret_value().startswith("http://testserver/dashboard/invite/")
        bo = await client.invite_user(email="bo@example.com", role="developer")
        page = await client.list_users(limit=1)
        assert [u.id for u in page.items] == [bo.id] and page.next_cursor == bo.id
        assert [u.email async for u in client.iter_users(limit=1)] == ["bo@example.com", "ana@example.com"]
        assert (await client.get_user(ana.id)).invite_url is None
        assert (await client.update_user(ana.id, role="finance")).role == "finance"
        again = await client.reinvite_user(ana.id)
        assert again.invite_url is not None and again.invite_url != ana.invite_url
        with pytest.raises(InvalidStateError):
            await client.update_user(ana.id, disabled=True)  # an invited user is removed instead
        await client.remove_user(ana.id)
        with pytest.raises(NotFoundError):
            await client.get_user(ana.id)
