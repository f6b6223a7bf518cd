"""Each failed webhook attempt is one WARNING line with the delivery, the endpoint, the attempt
number and the outcome, the last one saying EXHAUSTED; never the secret, the URL or the body.
Real deliveries to a local receiver; SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.kit import refused_address
from tests.observability.capture import Capture, lines_of, logs
from tests.webhooks.helpers import Hooks, create_endpoint, create_intent, deliveries_of

__all__ = ["logs"]  # the fixture

DELIVERIES = "payorch.worker.deliveries"


pytestmark = pytest.mark.settings(webhook_retry_schedule="1,1,1,1,1,1", webhook_timeout_seconds=0.5)


def attempt_lines(capture: Capture, endpoint_id: str) -> list[dict[str, object]]:
    return [line for line in lines_of(capture, DELIVERIES) if line.get("endpoint_id") == endpoint_id]


async def test_every_failed_attempt_is_a_warning_and_the_last_says_exhausted(
    logs: Capture, hooks: Hooks
) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, secret = await create_endpoint(client, sandbox, receiver.url("/status/500"))
    intent_id = await create_intent(client, sandbox)
    for _ in range(7):
        assert await deliveries.run_until_idle(runtime) == 1
        clock.advance(1)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    lines = attempt_lines(logs, endpoint_id)
    assert [line["attempt"] for line in lines] == [1, 2, 3, 4, 5, 6, 7]
    for line in lines:
        assert line["level"] == "WARNING" and line["delivery_id"] == delivery["id"]
        assert line["outcome"] == "unexpected_status" and line["response_status"] == 500
    assert [line["delivery_status"] for line in lines] == ["PENDING"] * 6 + ["EXHAUSTED"]
    assert "EXHAUSTED" in str(lines[-1]["message"])
    text = "".join(str(line) for line in lines)
    assert intent_id not in text and receiver.url("/status/500") not in text  # no body, no URL
    assert secret not in logs.everything()


@pytest.mark.parametrize(
    ("path", "outcome"),
    [("/sleep/2", "timeout"), (None, "network_error"), ("/ok", None)],
)
async def test_a_timeout_or_network_error_names_its_outcome_and_a_success_logs_nothing(
    logs: Capture, path: str | None, outcome: str | None, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    with refused_address(4400) as address:
        url = receiver.url(path) if path else f"http://{address}/nobody-listens"
        endpoint_id, _ = await create_endpoint(client, sandbox, url)
        await create_intent(client, sandbox)
        assert await deliveries.run_until_idle(runtime) == 1
    lines = attempt_lines(logs, endpoint_id)
    if outcome is None:
        assert lines == []  # a delivered webhook is no warning
        return
    [line] = lines
    assert line["level"] == "WARNING" and line["attempt"] == 1 and line["outcome"] == outcome
    assert line["response_status"] is None and line["delivery_status"] == "PENDING"
