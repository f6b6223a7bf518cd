"""Every metric the alert rules (deploy/prometheus) and the Grafana board (deploy/grafana) query is
exported by a running `payorch serve` or `payorch worker`: a name that no process exports would
leave an alert silent and a panel empty for ever. Recording rules' own names are not exported
(Prometheus makes them); a histogram's _bucket, _sum and _count come from its one family."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.databases import own_database
from tests.kit import Sandbox
from tests.live import create_sandbox, free_port, live_server, payorch_env, stop_process
from tests.providers.helpers import start
from tests.webhooks.helpers import create_endpoint
from tests.webhooks.receiver import serve_receiver

pytestmark = pytest.mark.slow

database_url = own_database  # its worker sweeps the whole database

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "payorch.rules.yml"
BOARD = ROOT / "deploy" / "grafana" / "payorch.json"
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
METRIC = re.compile(r"(?<![\w:])payorch_[a-z0-9_]+")
RECORDED = re.compile(r"(?<![\w:])[a-z_]+:[a-z0-9_:]+")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def rule_expressions() -> Iterator[str]:
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            yield str(rule["expr"])


def board_expressions() -> Iterator[str]:
    board = json.loads(BOARD.read_text())
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            yield str(target["expr"])
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            yield str(variable["query"]["query"])


def queried(expressions: Iterator[str]) -> tuple[set[str], set[str]]:
    """Metric names and recording-rule names in the expressions (label values left out)."""
    metrics: set[str] = set()
    recorded: set[str] = set()
    for expr in expressions:
        bare = QUOTED.sub('""', expr)
        metrics.update(METRIC.findall(bare))
        recorded.update(RECORDED.findall(bare))
    return metrics, recorded


def exported(text: str) -> set[str]:
    """Every series name the exposition text's families stand for, samples seen yet or not."""
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


def test_the_parser_finds_names_and_leaves_label_values_out() -> None:
    metrics, recorded = queried(
        iter(['sum by (le) (rate(payorch_a_bucket{route="payorch_not_a_metric"}[5m])) / payorch:x:rate5m'])
    )
    assert metrics == {"payorch_a_bucket"} and recorded == {"payorch:x:rate5m"}
    text = "# TYPE payorch_h histogram\n# TYPE payorch_c_total counter\n# TYPE payorch_g gauge\n"
    assert exported(text) == {
        "payorch_h_bucket",
        "payorch_h_sum",
        "payorch_h_count",
        "payorch_c_total",
        "payorch_g",
    }


@pytest.fixture
def sqlite(database_url: str) -> None:
    # Every process declares every family at start; the database changes no name.
    if not database_url.startswith("sqlite"):
        pytest.skip("the names do not depend on the database: run once, on SQLite")


async def scrape_text(url: str) -> str:
    async with httpx.AsyncClient(timeout=5) as http:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = await http.get(url)
                response.raise_for_status()
                return response.text
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"{url} never answered"
                await asyncio.sleep(0.1)


async def test_every_queried_metric_is_exported_by_serve_or_worker(
    sqlite: None, database_url: str, tmp_path: Path
) -> None:
    metrics_port = free_port()
    env = payorch_env(database_url, PAYORCH_WORKER_METRICS_PORT=str(metrics_port))
    created = create_sandbox(env)
    sandbox = Sandbox(created["application_id"], created["merchant_account_id"], created["api_key"])
    with live_server(env, "--no-worker") as base, (tmp_path / "worker.log").open("w") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "payorch", "worker"],
            env={**env, "PAYORCH_PUBLIC_URL": base},
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            async with serve_receiver() as receiver, httpx.AsyncClient(base_url=base) as client:
                # A payment and its webhook: the provider, intent and delivery series get samples.
                await create_endpoint(client, sandbox, receiver.url("/hook"))
                await start(client, sandbox)
                await receiver.wait_for(1, timeout=30)
                api = await scrape_text(f"{base}/metrics")
                worker_text = await scrape_text(f"http://127.0.0.1:{metrics_port}/metrics")
        finally:
            stop_process(worker)
        assert worker.returncode == 0, (tmp_path / "worker.log").read_text()

    rule_metrics, rule_records = queried(rule_expressions())
    board_metrics, board_records = queried(board_expressions())
    defined = {
        str(rule["record"])
        for group in yaml.safe_load(RULES.read_text())["groups"]
        for rule in group["rules"]
        if "record" in rule
    }
    assert rule_records | board_records <= defined, "recording rules used but not defined"
    wanted = rule_metrics | board_metrics
    assert len(wanted) >= 15, sorted(wanted)  # the parser found the queries' names
    assert wanted - (exported(api) | exported(worker_text)) == set(), "queried, never exported"

    # The worker's own metrics were recorded by the worker process, not only declared.
    samples = {
        (sample.name, tuple(sorted(sample.labels.items())))
        for family in text_string_to_metric_families(worker_text)
        for sample in family.samples
    }
    names = {name for name, _ in samples}
    assert (
        "payorch_worker_job_last_success_timestamp_seconds",
        (("worker_job", "webhook-deliveries"),),
    ) in samples
    assert "payorch_webhook_delivery_attempt_duration_seconds_count" in names
