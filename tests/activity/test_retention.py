"""Retention through the worker, with a frozen clock, on SQLite and PostgreSQL: entries older
than PAYORCH_ACTIVITY_RETENTION_DAYS go from the start of each chain, after an
activity.retention_applied entry naming the cut; the rest still verifies (from the cut), a
second run changes nothing, and an entry removed by hand after the cut is still found."""

from __future__ import annotations

import httpx
import pytest

from payorch.activity import repository
from payorch.activity.retention import ApplyActivityRetention
from payorch.activity.verification import Broken, Verified, verify
from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from payorch.worker.jobs import default_jobs
from payorch.worker.runner import Worker
from tests.activity.helpers import edit, remove, write_entries
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.databases import own_database
from tests.kit import Sandbox, new_application
from tests.live import payorch_env

database_url = own_database  # retention sweeps every application: this module gets its own

DAY = 86400


class StopWhenIdle(ApplyActivityRetention):
    """The real job, with small batches; stops its worker the first time it deletes nothing."""

    def __init__(self) -> None:
        super().__init__(batch=2)
        self.worker: Worker | None = None
        self.calls: list[int] = []

    async def run_once(self, runtime: Runtime) -> int:
        done = await super().run_once(runtime)
        self.calls.append(done)
        if done == 0 and self.worker is not None:
            self.worker.stop()
        return done


async def retention_through_worker(runtime: Runtime) -> list[int]:
    job = StopWhenIdle()
    job.worker = Worker(runtime, [job])
    await job.worker.run()
    return job.calls


async def listed(client: httpx.AsyncClient, sandbox: Sandbox) -> list[tuple[int, str]]:
    response = await client.get("/v1/admin/activity", params={"limit": 100}, headers=sandbox.headers)
    assert response.status_code == 200, response.text
    return [(item["seq"], item["action"]) for item in response.json()["items"]]


async def test_old_entries_go_from_the_start_and_the_chain_still_verifies(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, database_url: str
) -> None:
    assert "activity-retention" in [job.name for job in default_jobs()]
    assert runtime.settings.activity_retention_days == 400  # the documented default
    sandbox = await new_application(runtime)
    old = await write_entries(runtime, sandbox.application_id, 5)
    clock.advance(300 * DAY)
    young = await write_entries(runtime, sandbox.application_id, 2)  # seqs 6, 7
    assert await retention_through_worker(runtime) == [0]  # nothing is 400 days old yet

    clock.advance(101 * DAY)  # seqs 1-5 are 401 days old, 6-7 are 101
    assert await retention_through_worker(runtime) == [2, 2, 1, 0]  # batches of 2
    kept = await listed(client, sandbox)
    assert kept == [(8, "activity.retention_applied"), (7, young[1].action), (6, young[0].action)]
    cut = (await client.get("/v1/admin/activity", headers=sandbox.headers)).json()["items"][0]
    assert cut["actor"] == {"type": "system", "id": "activity-retention", "email": None}
    assert cut["changes"] == {"removed_through_seq": 5, "previous_hash": old[4].hash}
    assert cut["resource"] == {"type": "activity_log", "id": sandbox.application_id}

    results = [r async for r in verify(runtime.phases.reading, sandbox.application_id)]
    assert [(type(r), getattr(r, "entries", None), getattr(r, "first_seq", None)) for r in results] == [
        (Verified, 3, 6)
    ]
    done = cli(
        ["activity", "verify", "--application-id", sandbox.application_id], payorch_env(database_url)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"payorch: {sandbox.application_id}: 3 entries verified, seq 6 to 8;")

    assert await retention_through_worker(runtime) == [0]  # no new cut: nothing appended
    assert len(await listed(client, sandbox)) == 3

    await remove(runtime, young[0])  # seq 6, the first after the cut, removed by hand
    refused(
        cli(
            ["activity", "verify", "--application-id", sandbox.application_id], payorch_env(database_url)
        ),
        f"entry {young[1].id} (seq 7): missing before: seq 6 missing",
    )


async def test_a_chain_entirely_past_retention_keeps_only_its_cut(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await new_application(runtime)
    old = await write_entries(runtime, sandbox.application_id, 3)
    clock.advance(401 * DAY)
    assert await retention_through_worker(runtime) == [2, 1, 0]
    assert await listed(client, sandbox) == [(4, "activity.retention_applied")]
    [result] = [r async for r in verify(runtime.phases.reading, sandbox.application_id)]
    assert isinstance(result, Verified) and (result.entries, result.first_seq) == (1, 4), result
    later = await write_entries(runtime, sandbox.application_id, 1)
    assert later[0].seq == 5 and later[0].previous_hash != old[-1].hash
    [result] = [r async for r in verify(runtime.phases.reading, sandbox.application_id)]
    assert isinstance(result, Verified) and result.entries == 2


async def test_moving_the_cut_by_hand_is_found(runtime: Runtime, clock: FrozenClock) -> None:
    """The cut is an entry of the chain: one more entry removed by hand and the cut moved over
    it (to the removed entry's hash, so the next entry links) breaks the cut entry itself."""
    sandbox = await new_application(runtime)
    await write_entries(runtime, sandbox.application_id, 3)
    clock.advance(401 * DAY)
    kept = await write_entries(runtime, sandbox.application_id, 2)  # seqs 4, 5
    assert await retention_through_worker(runtime) == [2, 1, 0]
    [result] = [r async for r in verify(runtime.phases.reading, sandbox.application_id)]
    assert isinstance(result, Verified) and (result.first_seq, result.entries) == (4, 3)
    async with runtime.phases.reading() as conn:
        cut = await repository.entry_at(conn, sandbox.application_id, 6)
    assert cut is not None and cut.action == "activity.retention_applied"
    await remove(runtime, kept[0])
    await edit(runtime, cut, changes={"removed_through_seq": 4, "previous_hash": kept[0].hash})
    [result] = [r async for r in verify(runtime.phases.reading, sandbox.application_id)]
    assert isinstance(result, Broken), result
    assert (result.seq, result.entry_id, result.problem) == (6, cut.id, "content changed")


pytestmark = pytest.mark.slow
