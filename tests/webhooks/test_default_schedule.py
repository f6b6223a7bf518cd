"""The default retry schedule, as documented in docs/webhooks.md: attempts 2..7 wait 1 min,
5 min, 15 min, 1 h, 6 h and 24 h after the previous attempt (other tests shorten it)."""

from __future__ import annotations

from datetime import timedelta

from payorch.config import Settings
from tests.webhooks.helpers import Hooks, deliveries_of

DEFAULT = (60, 300, 900, 3600, 21600, 86400)


def test_the_default_schedule_is_the_documented_one() -> None:
    assert Settings.model_fields["webhook_retry_schedule"].default == "60,300,900,3600,21600,86400"


async def test_the_delivery_job_waits_the_default_schedule(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    assert runtime.settings.retry_schedule == DEFAULT
    endpoint_id, _ = await hooks.queued("/status/503")
    start = clock.now()
    for attempt, wait in enumerate(DEFAULT, start=1):
        assert await deliveries.run_until_idle(runtime) == 1, attempt
        [delivery] = await deliveries_of(client, sandbox, endpoint_id)
        assert delivery["attempts"] == attempt and delivery["status"] == "PENDING"
        clock.advance(wait - 1)  # not due a second before the wait is over...
        assert await deliveries.run_until_idle(runtime) == 0, attempt
        clock.advance(1)  # ...due once it is
    assert await deliveries.run_until_idle(runtime) == 1
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["attempts"] == 7 and delivery["status"] == "EXHAUSTED"
    assert clock.now() - start == timedelta(seconds=sum(DEFAULT))
