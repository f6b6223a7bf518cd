"""`make run`'s first start (bootstrap_sandbox) on SQLite: besides the key, it invites the
sandbox's owner (PAYORCH_SANDBOX_OWNER_EMAIL) and prints the sign-in link once; the link sets
the owner's password; a second start prints no link."""

from __future__ import annotations

from pathlib import Path

import pytest

from payorch.bootstrap import bootstrap_sandbox
from payorch.clock import SystemClock
from payorch.db import Database
from payorch.db.migrate import upgrade_in_thread
from payorch.users import service
from tests.kit import make_settings

LINK = "http://testserver/dashboard/invite/"


@pytest.mark.parametrize("email", [None, "Me@Example.com"])
async def test_the_first_start_prints_the_owners_sign_in_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], email: str | None
) -> None:
    url = f"sqlite:///{tmp_path / 'first.db'}"
    upgrade_in_thread(url)
    settings = make_settings(url, **({"sandbox_owner_email": email} if email else {}))
    await bootstrap_sandbox(settings)
    printed = capsys.readouterr().out
    expected = (email or "owner@sandbox.localhost").lower()
    assert f"as its owner, {settings.sandbox_owner_email}" in printed
    [link] = [line.strip() for line in printed.splitlines() if LINK in line]
    database = Database(url)
    try:
        async with database.transaction() as conn:
            owner = await service.accept_invite(
                conn, SystemClock(), link.removeprefix(LINK), "a long password"
            )
        assert (owner.email, owner.role, owner.status) == (expected, "owner", "ACTIVE")
    finally:
        await database.dispose()
    await bootstrap_sandbox(settings)
    assert LINK not in capsys.readouterr().out
