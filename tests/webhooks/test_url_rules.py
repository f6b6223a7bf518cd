"""The spec's allowed webhook URLs, per application environment, at creation and at update.

Names are resolved by an injected resolver (no network): the table includes names whose
addresses are private, mixed, IPv4-mapped, and names that do not resolve.
"""

from __future__ import annotations

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.webhooks import urls
from tests.conftest import new_application

BASE = "/v1/admin/webhook-endpoints"

DNS: dict[str, list[str]] = {
    "shop.example": ["93.184.216.34"],
    "v6.example": ["2606:2800:220:1:248:1893:25c8:1946"],
    "internal.example": ["10.1.2.3"],
    "mixed.example": ["93.184.216.34", "192.168.1.10"],
    "loop.example": ["127.0.0.1"],
    "v6loop.example": ["::1"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "linklocal.example": ["169.254.169.254"],
    "cgnat.example": ["100.64.0.1"],
}


async def fake_resolver(host: str, port: int) -> list[str]:
    if host not in DNS:
        raise OSError("name does not resolve")
    return DNS[host]


CASES = [
    # SANDBOX: http or https on 80, 443, 3000, 4300, 4400, 8080; any address.
    ("SANDBOX", "http://shop.example/h", True),
    ("SANDBOX", "https://shop.example/h", True),
    ("SANDBOX", "http://localhost:3000/h", True),
    ("SANDBOX", "http://127.0.0.1:8080/h", True),
    ("SANDBOX", "http://10.0.0.5:4300/h", True),
    ("SANDBOX", "https://internal.example:4400/h", True),
    ("SANDBOX", "http://[::1]:8080/h", True),
    ("SANDBOX", "http://shop.example:8000/h", False),
    ("SANDBOX", "http://shop.example:22/h", False),
    ("SANDBOX", "https://shop.example:8443/h", False),
    ("SANDBOX", "ftp://shop.example/h", False),
    ("SANDBOX", "shop.example/h", False),
    ("SANDBOX", "not a url", False),
    ("SANDBOX", "http://user:pw@shop.example/h", False),
    ("SANDBOX", "http://shop.example:99999/h", False),
    # PRODUCTION: https, port 443, every resolved address public.
    ("PRODUCTION", "https://shop.example/h", True),
    ("PRODUCTION", "https://shop.example:443/h", True),
    ("PRODUCTION", "https://v6.example/h", True),
    ("PRODUCTION", "https://93.184.216.34/h", True),
    ("PRODUCTION", "http://shop.example/h", False),
    ("PRODUCTION", "https://shop.example:8443/h", False),
    ("PRODUCTION", "https://shop.example:8080/h", False),
    ("PRODUCTION", "https://localhost/h", False),
    ("PRODUCTION", "https://api.localhost/h", False),
    ("PRODUCTION", "https://internal.example/h", False),  # name -> private address
    ("PRODUCTION", "https://mixed.example/h", False),  # one of its addresses is private
    ("PRODUCTION", "https://loop.example/h", False),
    ("PRODUCTION", "https://v6loop.example/h", False),
    ("PRODUCTION", "https://mapped.example/h", False),  # IPv4-mapped private
    ("PRODUCTION", "https://linklocal.example/h", False),  # cloud metadata address
    ("PRODUCTION", "https://cgnat.example/h", False),  # shared address space
    ("PRODUCTION", "https://nowhere.example/h", False),  # does not resolve
    ("PRODUCTION", "https://127.0.0.1/h", False),
    ("PRODUCTION", "https://10.0.0.1/h", False),
    ("PRODUCTION", "https://172.16.5.4/h", False),
    ("PRODUCTION", "https://192.168.0.1/h", False),
    ("PRODUCTION", "https://0.0.0.0/h", False),
    ("PRODUCTION", "https://224.0.0.1/h", False),
    ("PRODUCTION", "https://240.0.0.1/h", False),
    ("PRODUCTION", "https://255.255.255.255/h", False),
    ("PRODUCTION", "https://[::1]/h", False),
    ("PRODUCTION", "https://[::]/h", False),
    ("PRODUCTION", "https://[fe80::1]/h", False),
    ("PRODUCTION", "https://[fc00::1]/h", False),
    ("PRODUCTION", "https://[ff02::1]/h", False),
    ("PRODUCTION", "https://[::ffff:127.0.0.1]/h", False),
    ("PRODUCTION", "https://[::ffff:192.168.1.1]/h", False),
    ("PRODUCTION", "https://[2002:c0a8:0101::1]/h", False),  # 6to4 of 192.168.1.1
    ("PRODUCTION", "https://[64:ff9b::a00:1]/h", False),  # NAT64 of 10.0.0.1
    ("PRODUCTION", "https://2130706433/h", False),  # 127.0.0.1 written as a number
]


@pytest.mark.parametrize(("environment", "url", "allowed"), CASES)
async def test_create_applies_the_rules_of_the_environment(
    client: httpx.AsyncClient, runtime: Runtime, environment: str, url: str, allowed: bool
) -> None:
    runtime.webhook_resolver = fake_resolver
    app = await new_application(runtime, environment)
    response = await client.post(BASE, json={"url": url}, headers=app.headers)
    if allowed:
        assert response.status_code == 201, response.text
    else:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"
        assert (await client.get(BASE, headers=app.headers)).json()["items"] == []


async def test_update_applies_the_rules_too(client: httpx.AsyncClient, runtime: Runtime) -> None:
    runtime.webhook_resolver = fake_resolver
    app = await new_application(runtime, "PRODUCTION")
    created = await client.post(BASE, json={"url": "https://shop.example/h"}, headers=app.headers)
    assert created.status_code == 201, created.text
    url = f"{BASE}/{created.json()['data']['id']}"
    response = await client.patch(
        url, json={"url": "https://internal.example/h"}, headers=app.headers
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"
    assert (await client.get(url, headers=app.headers)).json()["url"] == "https://shop.example/h"


async def test_the_system_resolver_is_used_by_default() -> None:
    # localhost resolves through getaddrinfo to loopback: refused in PRODUCTION by its address
    # too, not only by its name (checked here through vet on a name the name rule does not catch).
    assert "127.0.0.1" in await urls.system_resolver("localhost", 443)
    target = await urls.vet("http://localhost:8080/h", urls.SANDBOX)
    assert "127.0.0.1" in target.addresses and target.host == "localhost"
