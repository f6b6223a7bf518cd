"""A long-running process settles its heap once start-up is done (payorch/heap.py): read
through the API process's own /metrics (prometheus_client's collector counts the collections
of each generation) while `payorch serve` answers creates."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.kit import intent_body
from tests.live import as_sandbox, create_sandbox, live_server, payorch_env

pytestmark = pytest.mark.slow

CREATES = 300


def metric(base: str, sample: str) -> int:
    metrics = httpx.get(f"{base}/metrics", timeout=5).text
    found = re.search(rf"^{re.escape(sample)} (\S+)$", metrics, re.M)
    assert found is not None, f"no {sample} in /metrics"
    return int(float(found.group(1)))


def young_collections(base: str) -> int:
    return metric(base, 'python_gc_collections_total{generation="0"}')


@pytest.mark.slow
def test_creates_run_few_young_collections(database_url: str) -> None:
    env = payorch_env(database_url, PAYORCH_RATE_LIMIT="100000/second")
    sandbox = as_sandbox(create_sandbox(env))
    headers = sandbox.headers
    body = intent_body(sandbox, external_reference="heap")
    with live_server(env, "--no-worker") as base, httpx.Client(base_url=base) as client:
        frozen = metric(base, "payorch_gc_frozen_objects")
        before = young_collections(base)
        for n in range(CREATES):
            answer = client.post(
                "/v1/payment-intents", json=body, headers=headers | {"Idempotency-Key": f"k{n}"}
            )
            assert answer.status_code == 201, answer.text
        collections = young_collections(base) - before
    print(f"\nfrozen: {frozen}; young collections during {CREATES} creates: {collections}")
    assert frozen > 10_000  # the start-up heap: modules, the app, the tables
    # With CPython's default threshold (700) the same creates ran up to 8 young collections.
    assert collections <= 2
