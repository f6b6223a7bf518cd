"""Read /metrics as a scraper would: the exposition text parsed into samples."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(client: httpx.AsyncClient) -> Samples:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    return parse(response.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample's value, 0 when absent (a labelled child appears on first use)."""
    return samples.get((name, frozenset(labels.items())), 0.0)
