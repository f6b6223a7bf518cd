"""`payorch activity verify` (in process; once as the real program), on SQLite and PostgreSQL:
entries written by record() verify; then a row edited, a row deleted (in the middle, at the end) and
two rows' seqs swapped directly in the database are each found, naming the right entry and what is
wrong; another application's chain still verifies beside a broken one."""

from __future__ import annotations

import subprocess

import pytest

from payorch.activity.chain import GENESIS
from payorch.activity.records import Entry
from payorch.runtime import Runtime
from tests.activity.helpers import edit, remove, swap_seqs, write_entries
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.kit import new_application
from tests.live import payorch_env, run_cli

pytestmark = pytest.mark.slow


def verify(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(["activity", "verify", *args], payorch_env(database_url))


def broken(done: subprocess.CompletedProcess[str], entry: Entry | None, seq: int, problem: str) -> str:
    """Exit 1 and one line naming the application, the entry (id and seq) and the problem."""
    refused(done, entry.application_id if entry else "", f"(seq {seq}): {problem}: ")
    line = done.stderr.strip()
    assert (f"entry {entry.id} " if entry else "entry (missing) ") in line, line
    return line


@pytest.fixture
async def chain(runtime: Runtime) -> list[Entry]:
    sandbox = await new_application(runtime)
    return await write_entries(runtime, sandbox.application_id, 6)


async def test_an_untouched_chain_verifies_and_prints_its_head(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    app = chain[0].application_id
    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    done = run_cli(["activity", "verify", "--application-id", app], payorch_env(database_url))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"payorch: {app}: 6 entries verified, seq 1 to 6; head seq 6 hash {chain[-1].hash}\n"
    )
    assert chain[0].previous_hash == GENESIS and chain[3].previous_hash == chain[2].hash
    empty = await new_application(runtime)
    done = verify(database_url, "--application-id", empty.application_id)
    assert done.returncode == 0, done.stderr
    assert f"{empty.application_id}: 0 entries verified; head seq 0 hash {GENESIS}" in done.stdout
    refused(verify(database_url, "--application-id", "app_nothere"), "No application app_nothere")


async def test_an_edited_row_is_named(runtime: Runtime, database_url: str, chain: list[Entry]) -> None:
    await edit(runtime, chain[2], changes={"amount": 999, "note": "n2"})
    broken(verify(database_url, "--application-id", chain[0].application_id), chain[2], 3, "content changed")


async def test_an_edited_row_with_its_hash_recomputed_is_named(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    """A rewrite that also stores the new content's hash is named by the next entry's link."""
    from payorch.activity.verification import entry_hash

    forged = chain[1].__class__(**{**_fields(chain[1]), "resource_id": "res_other"})
    await edit(runtime, chain[1], resource_id="res_other", hash=entry_hash(forged))
    line = broken(
        verify(database_url, "--application-id", chain[0].application_id), chain[1], 2, "content changed"
    )
    assert "the next entry (seq 3) links to another" in line


async def test_a_row_deleted_in_the_middle_is_named(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    await remove(runtime, chain[3])
    line = broken(
        verify(database_url, "--application-id", chain[0].application_id), chain[4], 5, "missing before"
    )
    assert line.endswith("seq 4 missing")


async def test_the_first_row_deleted_is_named(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    await remove(runtime, chain[0])
    broken(verify(database_url, "--application-id", chain[0].application_id), chain[1], 2, "missing before")


async def test_the_last_row_deleted_is_named_by_the_head(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    await remove(runtime, chain[5])
    done = verify(database_url, "--application-id", chain[0].application_id)
    line = broken(done, None, 6, "head mismatch")
    assert chain[0].application_id in line
    assert f"the chain ends after seq 5 ({chain[4].id}) but its head is at seq 6: seq 6 missing" in line


async def test_two_swapped_rows_are_named(runtime: Runtime, database_url: str, chain: list[Entry]) -> None:
    await swap_seqs(runtime, chain[1], chain[4])  # seqs 2 and 5
    line = broken(
        verify(database_url, "--application-id", chain[0].application_id), chain[4], 2, "out of order"
    )
    assert "written as seq 5" in line


async def test_adjacent_swapped_rows_are_named(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    await swap_seqs(runtime, chain[2], chain[3])  # seqs 3 and 4
    broken(verify(database_url, "--application-id", chain[0].application_id), chain[3], 3, "out of order")


async def test_every_application_is_verified_and_a_broken_one_fails_the_run(
    runtime: Runtime, database_url: str, chain: list[Entry]
) -> None:
    other = await new_application(runtime)
    intact = await write_entries(runtime, other.application_id, 2)
    await edit(runtime, chain[0], outcome="failure")
    done = verify(database_url)  # the other tests' applications too (broken ones among them)
    assert done.returncode == 1
    assert (
        f"payorch: {other.application_id}: 2 entries verified, seq 1 to 2; head seq 2 hash {intact[-1].hash}\n"
        in done.stdout
    )
    assert f"payorch: {chain[0].application_id}: entry {chain[0].id} (seq 1): content changed" in done.stderr


def _fields(entry: Entry) -> dict[str, object]:
    return {name: getattr(entry, name) for name in entry.__slots__}
