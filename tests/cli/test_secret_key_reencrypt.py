"""`payorch secret-key reencrypt` (docs/deployment.md, "Rotating PAYORCH_SECRET_KEY"): every
value stored encrypted (connectors' credentials, webhook endpoints' current and previous
secrets, people's TOTP secrets, a TOTP enrollment in progress) ends under the new key, also when
the first run is killed half-way (SIGKILL after its tenth value: a second run finishes the job,
nothing lost). The command prints no value and no key."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import httpx
import pytest
from sqlalchemy import select

from payorch.crypto import Cipher
from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from payorch.secret_rotation import PLACES
from tests.cli_in_process import cli
from tests.dashboard.signing import TOTP_SECRET, accept, invite, new_person
from tests.databases import own_database
from tests.kit import Sandbox, chosen_providers, create_endpoint, new_application
from tests.live import payorch_env, run_cli

OLD = "old-secret-key-0123456789abcdef0123456789"
NEW = "new-secret-key-9876543210fedcba9876543210"
OTHER = "some-other-key-00000000000000000000000000"
KILLED_AFTER = 10  # values re-encrypted before the first run is killed

pytestmark = [pytest.mark.slow, pytest.mark.settings(secret_key=OLD)]
database_url = own_database  # the command re-encrypts the whole database: this module gets its own

CREDENTIALS = {
    PROVIDER_A: {"commerce_code": "597055555532", "api_key": "secret-api-key-value"},
    PROVIDER_B: {"access_token": "TEST-123-abc", "webhook_secret": "whsec-value"},
}
# Encrypted connector credentials to re-encrypt: two providers' are enough rows.
chosen_providers(
    *CREDENTIALS,
    left_out={
        PROVIDER_C: "two providers' connectors are enough rows to re-encrypt",
        PROVIDER_D: "two providers' connectors are enough rows to re-encrypt",
    },
)

# The real command in a process that kills itself (SIGKILL: no clean-up, no rollback of what
# was committed) right after its N-th value was re-encrypted and committed.
CRASHING = """
import os, signal, sys
from payorch import secret_rotation
from payorch.cli import main

real, left = secret_rotation.reencrypt_value, int(sys.argv[1])

async def crashing(*args):
    global left
    outcome = await real(*args)
    if outcome is secret_rotation.Outcome.REENCRYPTED:
        left -= 1
        if left == 0:
            os.kill(os.getpid(), signal.SIGKILL)
    return outcome

secret_rotation.reencrypt_value = crashing
sys.exit(main(["secret-key", "reencrypt"]))
"""


async def _stored(runtime: Runtime) -> dict[tuple[str, str], str]:
    """Every encrypted value, the token alone, by (place, row id)."""
    found: dict[tuple[str, str], str] = {}
    async with runtime.database.reading() as conn:
        for place in PLACES:
            column = place.table.c[place.column]
            rows = (await conn.execute(select(place.table.c.id, column).where(column.is_not(None)))).all()
            for row_id, value in rows:
                if value.startswith(place.prefix):
                    found[(place.name, row_id)] = value.removeprefix(place.prefix)
    return found


def _count(printed: str, outcome: str) -> int:
    """The sum of the counts of ``outcome`` over the lines of the command."""
    return sum(int(n) for n in re.findall(rf"(\d+) {outcome}", printed))


def _readable(stored: dict[tuple[str, str], str], *keys: str) -> dict[tuple[str, str], str]:
    """The values that ``keys`` decrypt."""
    cipher, readable = Cipher(list(keys)), {}
    for where, token in stored.items():
        try:
            readable[where] = cipher.decrypt(token)
        except ValueError:
            pass
    return readable


async def _an_application_with_secrets(client: httpx.AsyncClient, runtime: Runtime, n: int) -> list[str]:
    """Two connectors with credentials, four endpoints (one with its secret rolled: a previous
    secret), an owner with TOTP and a person half-way through enrolling it; their secrets."""
    app: Sandbox = await new_application(runtime)
    path = f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors"
    for provider, credentials in CREDENTIALS.items():
        body = {"provider": provider, "mode": "SANDBOX", "priority": 5, "credentials": credentials}
        created = await client.post(path, json=body, headers=app.headers)
        assert created.status_code == 201, created.text
    secrets = [(await create_endpoint(client, app, f"https://hooks{n}.example/{e}")).secret for e in range(4)]
    endpoint = (await client.get("/v1/admin/webhook-endpoints", headers=app.headers)).json()["items"][0]
    rolled = await client.post(
        f"/v1/admin/webhook-endpoints/{endpoint['id']}/secret/rotate", json={}, headers=app.headers
    )
    assert rolled.status_code == 200, rolled.text
    secrets.append(rolled.json()["data"]["secret"])
    secrets.append((await new_person(client, app, f"owner{n}@example.com")).totp_secret)
    accepted = await accept(client, await invite(client, app, f"later{n}@example.com", "admin"))
    assert accepted.headers["location"] == "/dashboard/sign-in/enroll", accepted.text
    enrolling = await client.get("/dashboard/sign-in/enroll")  # keeps the secret shown, encrypted
    found = TOTP_SECRET.search(enrolling.text)
    assert found, enrolling.text
    return [*secrets, found.group(1).replace(" ", "")]


async def test_a_killed_run_is_finished_by_the_next_and_nothing_is_lost(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    shown = [s for n in range(3) for s in await _an_application_with_secrets(client, runtime, n)]
    before = await _stored(runtime)
    plain = _readable(before, OLD)
    assert len(plain) == len(before) == 27, sorted(before)
    assert {name for name, _ in plain} == {place.name for place in PLACES}
    assert set(shown) <= set(plain.values())
    env = payorch_env(database_url, PAYORCH_SECRET_KEY=f"{NEW},{OLD}")

    killed = subprocess.run(  # noqa: S603 - our interpreter, our script
        [sys.executable, "-c", CRASHING, str(KILLED_AFTER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    half = await _stored(runtime)
    # Ten values are under the new key, the rest still under the old one; while the service
    # runs with NEW,OLD it reads every one of them.
    assert len(_readable(half, NEW)) == KILLED_AFTER
    assert len(_readable(half, OLD)) == len(before) - KILLED_AFTER
    assert _readable(half, NEW, OLD) == plain

    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    done = run_cli(["secret-key", "reencrypt"], env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[1].strip() for line in lines[:-1]] == [place.name for place in PLACES]
    assert _count(done.stdout, "re-encrypted") == len(before) - KILLED_AFTER, done.stdout
    assert _count(done.stdout, "already under the first key") == KILLED_AFTER, done.stdout
    assert lines[-1] == "payorch: every stored secret is under the first key of PAYORCH_SECRET_KEY"

    after = await _stored(runtime)
    assert _readable(after, NEW) == plain  # every value, under the new key alone
    assert not _readable(after, OLD)
    # A third run finds nothing to do; the outputs show no value and no key.
    again = cli(["secret-key", "reencrypt"], env)
    assert again.returncode == 0 and "re-encrypted" not in again.stdout, again
    printed = killed.stdout + killed.stderr + done.stdout + done.stderr + again.stdout + again.stderr
    for secret in [*plain.values(), *after.values(), NEW, OLD, *shown]:
        assert secret not in printed
    assert "secret-api-key-value" not in printed and json.dumps(CREDENTIALS) not in printed

    # With a key that decrypts nothing: each row named on stderr, exit 1, nothing changed.
    refused = cli(["secret-key", "reencrypt"], payorch_env(database_url, PAYORCH_SECRET_KEY=OTHER))
    assert refused.returncode == 1, refused
    named = [
        line for line in refused.stderr.splitlines() if "no key of PAYORCH_SECRET_KEY decrypts it" in line
    ]
    assert len(named) == len(before)
    assert all(f" of {row_id}: " in refused.stderr for _, row_id in before)
    assert await _stored(runtime) == after
