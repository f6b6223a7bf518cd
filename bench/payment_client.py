"""The sandbox payment clients the payment benchmarks share: one whole payment as a browser and
a shop make it (httpx), ``count`` of any such call by ``concurrency`` clients, and wrk's payment
client (bench/payment_flow.lua) with the CPU time of both sides.

One payment = create intent -> request checkout -> open the simulator page and press "approve"
(as a browser: form POST for provider A, redirect for B and C) -> the buyer's return (the service
confirms with the provider, authorizes, 303) -> read the intent (must be AUTHORIZED).
"""

from __future__ import annotations

import asyncio
import re
import resource
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urljoin

import httpx

from bench.kit import cpu_seconds, machine_busy, percentile, wrk_result

# --provider's choices -> the provider named in the checkout request.
PROVIDERS = {
    "a": "provider_a_redirect_post",
    "b": "provider_b_redirect_get",
    "c": "provider_c_redirect_get",
    "auto": "auto",
}
FORM_ACTION = re.compile(r'<form[^>]*method="post"[^>]*action="([^"]*)"', re.IGNORECASE)


async def one_payment(client: httpx.AsyncClient, merchant: str, provider: str, n: int) -> float:
    """One whole payment (module docstring) through ``provider``: its seconds."""
    started = time.perf_counter()
    intent = await client.post(
        "/v1/payment-intents",
        json={
            "merchant_account_id": merchant,
            "external_reference": f"bench-{n}",
            "amount": 1990,
            "currency": "CLP",
            "return_url": "https://shop.example/return",
        },
        headers={"Idempotency-Key": f"bench-intent-{n}-{time.time_ns()}"},
    )
    intent.raise_for_status()
    intent_id = intent.json()["id"]
    answer = await client.post(
        f"/v1/payment-intents/{intent_id}/checkout",
        json={"provider": provider},
        headers={"Idempotency-Key": f"bench-checkout-{intent_id}"},
    )
    answer.raise_for_status()
    checkout = answer.json()["checkout"]
    # The buyer at the simulator page (no bearer key: a browser).
    if checkout["method"] == "POST":
        page = await client.post(checkout["url"], data=checkout["fields"], headers={"Authorization": ""})
    else:
        page = await client.get(checkout["url"], headers={"Authorization": ""})
    page.raise_for_status()
    assert 'name="outcome"' in page.text, "no outcome form on the simulator page"
    # A form without an action posts back to the page's own address (provider C's).
    action = FORM_ACTION.search(page.text)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    chosen = await client.post(
        urljoin(str(page.url), action.group(1) if action else ""),
        data={**fields, "outcome": "approve"},
        headers={"Authorization": ""},
    )
    assert chosen.status_code == 303, chosen.text[:300]
    back = await client.get(chosen.headers["location"], headers={"Authorization": ""})  # the return
    assert back.status_code == 303, back.text[:300]
    read = await client.get(f"/v1/payment-intents/{intent_id}")
    status = read.json()["status"]
    assert status == "AUTHORIZED", status
    return time.perf_counter() - started


async def drive(
    url: str,
    headers: dict[str, str],
    one: Callable[[httpx.AsyncClient, int], Awaitable[float]],
    count: int,
    concurrency: int,
) -> dict[str, float]:
    """``count`` calls of ``one`` by ``concurrency`` clients at once, after one warm-up call."""
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as client:
        await one(client, -1)  # warm up
        queue: asyncio.Queue[int] = asyncio.Queue()
        for n in range(count):
            queue.put_nowait(n)
        latencies: list[float] = []

        async def worker() -> None:
            while True:
                try:
                    n = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                latencies.append(await one(client, n))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {
        "payments": count,
        "seconds": round(elapsed, 2),
        "payments_per_second": round(count / elapsed, 1),
        **{f"p{p}_ms": round(percentile(latencies, p) * 1000, 1) for p in (50, 95, 99)},
    }


async def run(
    url: str, api_key: str, merchant: str, provider: str, count: int, concurrency: int
) -> dict[str, float]:
    """``count`` whole payments through ``provider`` by ``concurrency`` buyers (``drive``'s figures)."""

    async def one(client: httpx.AsyncClient, n: int) -> float:
        return await one_payment(client, merchant, provider, n)

    return await drive(url, {"Authorization": f"Bearer {api_key}"}, one, count, concurrency)


def wrk_payments(
    url: str,
    key: str,
    merchant: str,
    provider: str,
    seconds: int,
    buyers: int,
    *,
    bare: bool = False,
    server_pid: int | None = None,
) -> dict[str, float]:
    """Whole payments for ``seconds`` by ``buyers`` wrk connections (bench/payment_flow.lua; on
    the bare app six creates each): payments_per_second, p50_ms..., and the CPU seconds wrk
    (client_cpu_s) and the server's processes (server_cpu_s) used, and the machine's busy share."""
    env = {"PAYORCH_BENCH_KEY": key, "PAYORCH_BENCH_MERCHANT": merchant}
    env |= {"PAYORCH_BENCH_PROVIDER": provider, "PAYORCH_BENCH_MODE": "bare" if bare else "payorch"}
    client = resource.getrusage(resource.RUSAGE_CHILDREN)
    server = cpu_seconds(server_pid) if server_pid else 0.0
    busy, total = machine_busy()
    figures = wrk_result("payment_flow.lua", url, env, seconds, buyers, buyers)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy_after, total_after = machine_busy()
    figures["client_cpu_s"] = round(after.ru_utime + after.ru_stime - client.ru_utime - client.ru_stime, 2)
    if server_pid:
        figures["server_cpu_s"] = round(cpu_seconds(server_pid) - server, 2)
    figures["machine_busy"] = round((busy_after - busy) / max(total_after - total, 1), 2)
    return figures
