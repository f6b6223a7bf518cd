"""The allowed webhook URLs (docs/webhooks.md), per application environment, at creation and at update.

Names are resolved by an injected resolver (no network): the table includes names whose
addresses are private, mixed, IPv4-mapped, and names that do not resolve. SANDBOX rows are
judged with PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE on (as tests/conftest.py sets it) and, in
their own table, off; link-local and cloud metadata addresses are refused either way.
"""

from __future__ import annotations

import httpx
import pytest

from payorch.config import load_settings
from payorch.runtime import Runtime
from payorch.webhooks import urls
from payorch.webhooks.urls import Resolver
from tests.kit import assert_error, new_application
from tests.webhooks.helpers import PRIVATE_OFF, PRIVATE_ON, PRIVATE_UNSET

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


@pytest.fixture
def webhook_resolver() -> Resolver:
    """Every runtime of this module resolves names from DNS above (built with it)."""
    return fake_resolver


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
    # Link-local and cloud metadata addresses: never, even with private addresses allowed.
    ("SANDBOX", "http://169.254.169.254/latest/meta-data/", False),
    ("SANDBOX", "http://169.254.169.254:80/h", False),
    ("SANDBOX", "https://169.254.1.2:8080/h", False),
    ("SANDBOX", "http://[fe80::1]:8080/h", False),
    ("SANDBOX", "http://[fd00:ec2::254]/h", False),  # AWS metadata over IPv6
    ("SANDBOX", "http://100.100.100.200/h", False),  # Alibaba Cloud metadata
    ("SANDBOX", "http://[::ffff:169.254.169.254]/h", False),  # IPv4-mapped
    ("SANDBOX", "http://[2002:a9fe:a9fe::1]/h", False),  # 6to4 of 169.254.169.254
    ("SANDBOX", "http://[64:ff9b::a9fe:a9fe]/h", False),  # NAT64 of 169.254.169.254
    ("SANDBOX", "http://[64:ff9b::6464:64c8]/h", False),  # NAT64 of 100.100.100.200
    ("SANDBOX", "http://2852039166/h", False),  # 169.254.169.254 written as a number
    ("SANDBOX", "http://0xa9fea9fe/h", False),  # ... in hexadecimal
    ("SANDBOX", "http://169.254.43518/h", False),  # ... in the a.b.c form
    ("SANDBOX", "http://100.64.0.1/h", True),  # shared space, but not the metadata address
    ("SANDBOX", "http://linklocal.example/h", True),  # a name: judged at every attempt
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
    ("PRODUCTION", "https://169.254.169.254/h", False),
    ("PRODUCTION", "https://[fd00:ec2::254]/h", False),
    ("PRODUCTION", "https://100.100.100.200/h", False),
    ("PRODUCTION", "https://[::ffff:169.254.169.254]/h", False),
]

# SANDBOX while PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE is off: public addresses only.
SANDBOX_PUBLIC_ONLY_CASES = [
    ("http://shop.example/h", True),
    ("https://93.184.216.34:4400/h", True),
    ("http://internal.example/h", True),  # a name: judged at every attempt (see below)
    ("http://localhost:3000/h", False),
    ("http://app.localhost:3000/h", False),
    ("http://127.0.0.1:8080/h", False),
    ("http://127.9.9.9:8080/h", False),
    ("http://10.0.0.5:4300/h", False),
    ("http://172.16.5.4/h", False),
    ("http://192.168.0.1/h", False),
    ("http://[::1]:8080/h", False),
    ("http://[fc00::1]/h", False),
    ("http://[::ffff:10.0.0.1]/h", False),
    ("http://2130706433:8080/h", False),  # 127.0.0.1 written as a number
    ("http://0.0.0.0:8080/h", False),
    ("http://169.254.169.254/h", False),
]


async def assert_create(
    client: httpx.AsyncClient, runtime: Runtime, environment: str, url: str, allowed: bool
) -> None:
    app = await new_application(runtime, environment)
    response = await client.post(BASE, json={"url": url}, headers=app.headers)
    if allowed:
        assert response.status_code == 201, response.text
    else:
        error = assert_error(response, 400, "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED")
        assert error["details"]["reason"] in error["message"]
        assert (await client.get(BASE, headers=app.headers)).json()["items"] == []


@pytest.mark.parametrize(("environment", "url", "allowed"), CASES)
async def test_create_applies_the_rules_of_the_environment(
    client: httpx.AsyncClient, runtime: Runtime, environment: str, url: str, allowed: bool
) -> None:
    await assert_create(client, runtime, environment, url, allowed)


@pytest.mark.parametrize("settings_overrides", [PRIVATE_OFF], indirect=True)
@pytest.mark.parametrize(("url", "allowed"), SANDBOX_PUBLIC_ONLY_CASES)
async def test_sandbox_reaches_public_addresses_only_while_the_setting_is_off(
    client: httpx.AsyncClient, runtime: Runtime, url: str, allowed: bool
) -> None:
    await assert_create(client, runtime, "SANDBOX", url, allowed)


@pytest.mark.parametrize("settings_overrides", [PRIVATE_ON, PRIVATE_OFF], indirect=True)
async def test_metadata_address_reasons_are_clear(client: httpx.AsyncClient, runtime: Runtime) -> None:
    for environment, url in (
        ("SANDBOX", "http://169.254.169.254/latest/meta-data/"),
        ("PRODUCTION", "https://169.254.169.254/latest/meta-data/"),
    ):
        app = await new_application(runtime, environment)
        response = await client.post(BASE, json={"url": url}, headers=app.headers)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["reason"] == (
            "the address is link-local or cloud metadata, never allowed"
        )


@pytest.mark.parametrize("settings_overrides", [PRIVATE_UNSET], indirect=True)
async def test_the_default_allows_private_sandbox_urls_on_sqlite_only(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    # The embedded SQLite database is a developer's own machine; PostgreSQL a shared service.
    on_sqlite = runtime.settings.database_url.startswith("sqlite")
    for url in ("http://127.0.0.1:3000/h", "http://localhost:3000/h", "http://10.0.0.5:8080/h"):
        await assert_create(client, runtime, "SANDBOX", url, allowed=on_sqlite)
    await assert_create(client, runtime, "SANDBOX", "http://169.254.169.254/h", allowed=False)


async def test_update_applies_the_rules_too(client: httpx.AsyncClient, runtime: Runtime) -> None:
    app = await new_application(runtime, "PRODUCTION")
    created = await client.post(BASE, json={"url": "https://shop.example/h"}, headers=app.headers)
    assert created.status_code == 201, created.text
    url = f"{BASE}/{created.json()['data']['id']}"
    response = await client.patch(url, json={"url": "https://internal.example/h"}, headers=app.headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"
    assert (await client.get(url, headers=app.headers)).json()["url"] == "https://shop.example/h"


async def test_the_system_resolver_is_used_by_default() -> None:
    # localhost resolves through getaddrinfo to loopback: refused in PRODUCTION by its address
    # too, not only by its name (checked here through vet on a name the name rule does not catch).
    assert "127.0.0.1" in await urls.system_resolver("localhost", 443)
    target = await urls.vet("http://localhost:8080/h", urls.SANDBOX, sandbox_private=True)
    assert "127.0.0.1" in target.addresses and target.host == "localhost"


@pytest.mark.parametrize("settings_overrides", [PRIVATE_ON, PRIVATE_OFF], indirect=True)
async def test_sandbox_update_refuses_the_metadata_address(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    app = await new_application(runtime, "SANDBOX")
    created = await client.post(BASE, json={"url": "http://shop.example/h"}, headers=app.headers)
    assert created.status_code == 201, created.text
    url = f"{BASE}/{created.json()['data']['id']}"
    for target in ("http://169.254.169.254/h", "http://[::ffff:a9fe:a9fe]:8080/h"):
        response = await client.patch(url, json={"url": target}, headers=app.headers)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"
    assert (await client.get(url, headers=app.headers)).json()["url"] == "http://shop.example/h"


def test_the_setting_comes_from_the_environment_and_defaults_per_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sqlite, postgres = "sqlite:///./x.db", "postgresql://payorch@db:5432/payorch"
    key = "k" * 32
    variable = "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE"
    for value, on_sqlite, on_postgres in (
        (None, True, False),
        ("", True, False),  # empty means unset
        ("false", False, False),
        ("true", True, True),
    ):
        if value is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, value)
        for url, expected in ((sqlite, on_sqlite), (postgres, on_postgres)):
            settings = load_settings(database_url=url, secret_key=key)
            assert settings.sandbox_webhooks_private_allowed is expected, (value, url)


async def test_a_name_that_does_not_resolve_and_one_that_resolves_inside_give_one_reason(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    # Two reasons would let a tenant probe which internal names exist.
    app = await new_application(runtime, "PRODUCTION")
    reasons = set()
    for url in ("https://nowhere.example/h", "https://internal.example/h", "https://linklocal.example/h"):
        error = assert_error(
            await client.post(BASE, json={"url": url}, headers=app.headers),
            400,
            "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED",
        )
        reasons.add((error["message"], error["details"]["reason"]))
    assert reasons == {
        (
            "The webhook URL is not allowed: the URL's host is not allowed or does not resolve to an allowed address.",
            "the URL's host is not allowed or does not resolve to an allowed address",
        )
    }
