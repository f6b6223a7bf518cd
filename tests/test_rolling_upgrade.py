"""A rolling upgrade: the previous release's code keeps working on the new schema (expand, then
contract in a later release; docs/deployment.md, Upgrading). The previous release is the newest
commit CHANGELOG.md names; its src/ is taken from this repository's history with `git archive`.
On SQLite and PostgreSQL: the old release migrates a fresh database and creates a sandbox
application, this checkout's `payorch migrate` brings the schema to its newest migration, and
the old release's API (its own uvicorn app factory, PYTHONPATH at its src/) then runs a smoke:
create an intent, a checkout, paid at the simulator's page, a partial refund, the lists.

The old release's `serve` is not used: it runs its own migrations first, and Alembic refuses a
database at a revision the old code does not know. A running old replica does not migrate; the
API code is what must keep working.

A clone without that commit (a shallow one) cannot run it: the test says so, skipped on a
developer's machine and failed in CI, which clones the whole history."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest

from payorch.db.migrate import head_revisions
from tests.kit import RETURN_URL, intent_body
from tests.live import as_sandbox, free_port, payorch_env, run_cli, stop_process
from tests.needs import missing
from tests.providers.browser import Browser
from tests.releases import Release, previous_release

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False, timeout=120)


def materialised(release: Release, into: Path) -> Path:
    """The release's src/, extracted from its commit into ``into``."""
    assert release.commit is not None
    if git("cat-file", "-e", f"{release.commit}^{{commit}}").returncode != 0:
        shallow = git("rev-parse", "--is-shallow-repository").stdout.decode().strip()
        missing(
            f"CHANGELOG.md's previous release {release.version} is commit {release.commit}, which this "
            f"checkout lacks (a shallow clone: {shallow or 'no git repository'}); "
            "`git fetch --unshallow` brings it"
        )
    archive = git("archive", "--format=tar", release.commit, "src")
    assert archive.returncode == 0, archive.stderr.decode()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


@pytest.fixture(scope="module")
def old_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialised(previous_release(), tmp_path_factory.mktemp("previous-release"))


def old_env(database_url: str, old_src: Path, **extra: str) -> dict[str, str]:
    """This checkout's environment with the old release's src/ first on the path."""
    env = payorch_env(database_url, **extra)
    env["PYTHONPATH"] = str(old_src)
    return env


def answering(base: str, process: subprocess.Popen[str], output: IO[str]) -> None:
    """Wait for the old API: its start imports and builds the whole app (slow on a loaded machine)."""
    deadline = time.monotonic() + 180
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            output.seek(0)
            raise RuntimeError(f"the old API did not answer (exit {process.returncode}):\n{output.read()}")
        try:
            httpx.get(base + "/healthz", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The command line, with time for a loaded machine (each start imports the whole service)."""
    return run_cli(args, env, timeout=300)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def old_api(old_src: Path, fresh_database_url: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The old release made the database and its application; this checkout migrated it; the
    old API serves it: (its base URL, the application as `applications create --json`)."""
    env = old_env(fresh_database_url, old_src)
    imported = subprocess.run(
        [sys.executable, "-c", "import payorch; print(payorch.__file__); print(payorch.__version__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert imported == [str(old_src / "payorch" / "__init__.py"), previous_release().version]
    ok(cli(["migrate"], env))
    create = ["applications", "create", "--name", "Before", "--environment", "SANDBOX", "--mock-connectors"]
    created = json.loads(ok(cli([*create, "--json"], env)))
    ok(cli(["migrate"], payorch_env(fresh_database_url)))  # this checkout's migrations
    newest = ", ".join(sorted(head_revisions()))
    again = cli(["migrate"], payorch_env(fresh_database_url)).stderr
    assert f"the database is at the newest migration ({newest}); nothing to do" in again, again
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "payorch.composition:serve_app", "--factory"]
            + ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
            env={**old_env(fresh_database_url, old_src), "PAYORCH_PUBLIC_URL": base},
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            answering(base, process, output)
            yield base, created
        finally:
            stop_process(process)
            output.seek(0)
            log = output.read()
    assert "Traceback" not in log, log


async def test_the_previous_releases_api_works_on_the_new_schema(
    old_api: tuple[str, dict[str, str]],
) -> None:
    base, created = old_api
    sandbox = as_sandbox(created)
    headers = sandbox.headers
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        intent = await http.post(
            "/v1/payment-intents",
            json=intent_body(sandbox),
            headers={**headers, "Idempotency-Key": "rolling-intent"},
        )
        assert intent.status_code == 201, intent.text
        intent_id = intent.json()["id"]
        checkout = await http.post(
            f"/v1/payment-intents/{intent_id}/checkout",
            json={"provider": "provider_a_redirect_post"},
            headers={**headers, "Idempotency-Key": "rolling-checkout"},
        )
        assert checkout.status_code == 200, checkout.text
        action = checkout.json()["checkout"]
        browser = Browser(http, origin=base)
        trip = await browser.open(action["url"], action["method"], action["fields"] or None)
        assert trip.page is not None and trip.page.response.status_code == 200, trip
        returned = await browser.press(trip.page, "outcome", "approve")
        assert returned.left_to is not None and returned.left_to.startswith(RETURN_URL), returned

        read = await http.get(f"/v1/payment-intents/{intent_id}", headers=headers)
        assert read.status_code == 200 and read.json()["status"] == "AUTHORIZED", read.text
        payment_id = read.json()["payment"]["id"]
        refund = await http.post(
            f"/v1/payments/{payment_id}/refunds",
            json={"amount": 500},
            headers={**headers, "Idempotency-Key": "rolling-refund"},
        )
        assert refund.status_code == 201 and refund.json()["status"] == "SUCCEEDED", refund.text

        intents = await http.get("/v1/payment-intents", headers=headers)
        assert intents.status_code == 200, intents.text
        assert [(i["id"], i["status"]) for i in intents.json()["items"]] == [
            (intent_id, "PARTIALLY_REFUNDED")
        ]
        payments = await http.get("/v1/payments", headers=headers)
        assert payments.status_code == 200, payments.text
        assert [(p["id"], p["refunded_amount"]) for p in payments.json()["items"]] == [(payment_id, 500)]
        refunds = await http.get(f"/v1/payments/{payment_id}/refunds", headers=headers)
        assert refunds.status_code == 200, refunds.text
        assert [r["refund_id"] for r in refunds.json()["items"]] == [refund.json()["refund_id"]]


def test_a_clone_without_the_release_commit_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit the repository lacks: the message names the release, the commit and the cure
    (skipped here, so CI unset for this one)."""
    monkeypatch.delenv("CI", raising=False)
    lacking = Release(version="0.0.9", date="2026-01-01", commit="0" * 40)
    with pytest.raises(pytest.skip.Exception) as skipped:
        materialised(lacking, tmp_path)
    message = str(skipped.value)
    assert "0.0.9 is commit " + "0" * 40 in message and "git fetch --unshallow" in message, message


def test_a_database_newer_than_the_code_is_left_as_it_is(old_src: Path, tmp_path: Path) -> None:
    """An old process restarting mid-upgrade: from this release on, `migrate` (and `serve` and
    the other commands, which migrate first) leave a database a newer release migrated as it is
    and go on; the previous release refuses it (Alembic cannot locate the revision)."""
    database = tmp_path / "payorch.db"
    env = payorch_env(f"sqlite:///{database}")
    ok(cli(["migrate"], env))
    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_from_a_newer_release'")
    done = cli(["migrate"], env)
    newest = ", ".join(sorted(head_revisions()))
    assert done.returncode == 0 and done.stderr == (
        f"payorch: the database is at 9999_from_a_newer_release, newer than this release's newest "
        f"migration ({newest}); left as it is\n"
    ), done.stderr
    create = ["applications", "create", "--name", "After", "--environment", "SANDBOX", "--json"]
    assert json.loads(ok(cli(create, env)))["api_key"]
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
            ("9999_from_a_newer_release",)
        ]
    refused = cli(["migrate"], old_env(f"sqlite:///{database}", old_src))
    assert refused.returncode != 0 and "9999_from_a_newer_release" in refused.stderr, refused.stderr
