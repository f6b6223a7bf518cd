"""The world the per-role tests act on (tests/dashboard/test_roles.py over HTTP,
test_roles_browser.py in Chromium): every non-public route of payorch.access.pages.PAGES with a
case that sends what would really change something, a snapshot of the database to show a refused
request changed nothing, and signing in as a person of a role through the public pages."""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

import httpx
from sqlalchemy import select

from payorch.access.pages import PAGES, PUBLIC
from payorch.auth.service import Caller
from payorch.connectors import service as connectors
from payorch.connectors.schemas import CreateConnector
from payorch.db.tables import metadata
from payorch.providers.registry import PROVIDER_IDS, registration_of
from payorch.runtime import Runtime
from payorch.users import service as users
from payorch.users.records import User
from tests.dashboard.signing import (
    PASSWORD,
    accept,
    code_now,
    csrf_of,
    enroll_totp,
    invite,
    password_step,
    second_factor_step,
)
from tests.holding import Held, held_payment
from tests.kit import Sandbox, authorized_payment, create_endpoint

# Scopes no dashboard page or form needs: the API's alone (the key scopes' tests cover them).
NO_DASHBOARD_PAGE = frozenset(
    {
        "cancellations:write",
        "refunds:read",
        "disputes:read",
        "simulator:write",
        "providers:read",
        "events:read",
        "merchant_accounts:read",
    }
)
HOOK = "http://127.0.0.1:8080/hook"  # never called: these tests run no worker
NOT_SNAPSHOT = {"dashboard_sessions"}  # a request may move its own session's last_seen_at


@dataclass
class World:
    """What the cases act on: one application with MOCK connectors, a paid intent, an endpoint
    with a delivery, and the app's key for the API."""

    runtime: Runtime
    client: httpx.AsyncClient
    app: Sandbox
    intent_id: str
    endpoint_id: str
    delivery_id: str
    csrf: str = ""

    @property
    def operator(self) -> Caller:
        return Caller(self.app.application_id, "SANDBOX", "operator")

    async def person(self, status: str = "INVITED") -> User:
        """A fresh viewer of the application, INVITED, ACTIVE or DISABLED (through the service)."""
        rt = self.runtime
        async with rt.database.transaction() as conn:
            user, token = await users.invite(
                conn, rt.clock, self.operator, f"p-{secrets.token_hex(4)}@example.com", "viewer", limit=200
            )
            if status != "INVITED":
                user = await users.accept_invite(conn, rt.clock, token, PASSWORD)
            if status == "DISABLED":
                user = await users.disable(conn, rt.clock, self.operator, user.id)
        return user

    async def connector_id(self, provider: str, present: bool) -> str:
        """The merchant's connector of ``provider`` made present or absent (through the service)."""
        rt, caller, merchant = self.runtime, self.operator, self.app.merchant_account_id
        async with rt.database.transaction() as conn:
            listed = await connectors.list_connectors(conn, caller, merchant)
            found = next((c.id for c in listed.items if c.provider == provider), None)
            if present and found is None:
                made = await connectors.create_connector(
                    conn,
                    rt.clock,
                    rt.cipher,
                    caller,
                    merchant,
                    CreateConnector(provider=provider, mode="MOCK"),
                )
                found = made.id
            if not present and found is not None:
                await connectors.remove_connector(conn, rt.clock, caller, merchant, found)
        return found or ""

    async def new_key(self) -> str:
        made = await self.client.post("/v1/admin/api-credentials", headers=self.app.headers)
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    async def new_link(self) -> str:
        body = {"merchant_account_id": self.app.merchant_account_id, "amount": 1500, "currency": "CLP"}
        made = await self.client.post(
            "/v1/payment-links", json={**body, "description": "x"}, headers=self.app.headers
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    async def new_endpoint(self) -> str:
        return (await create_endpoint(self.client, self.app, HOOK)).id


# What each route is sent: its URL and, for a form, its fields (the CSRF token is added).
Case = Callable[[World], Awaitable[tuple[str, dict[str, str] | None]]]


def _get(url: str) -> Case:
    async def case(w: World) -> tuple[str, dict[str, str] | None]:
        return url.format(w=w), None

    return case


def _post(make: Callable[[World], Awaitable[tuple[str, dict[str, str]]]]) -> Case:
    async def case(w: World) -> tuple[str, dict[str, str] | None]:
        return await make(w)

    return case


async def _refund(w: World) -> tuple[str, dict[str, str]]:
    paid = await authorized_payment(w.runtime, w.app, amount=1000)
    return f"/payments/{paid.intent_id}/refunds", {"amount": "100", "refund_key": secrets.token_hex(4)}


# Holds at a provider whose connector no case removes (the last one's is: a connector that took
# payments cannot be removed).
HOLDS_AT = next(p for p in PROVIDER_IDS[:-1] if registration_of(p).holds is not None)


async def _hold(w: World) -> Held:
    return await held_payment(
        w.client, w.app, amount=1000, currency="CLP", provider=HOLDS_AT, reference=secrets.token_hex(4)
    )


async def _capture(w: World) -> tuple[str, dict[str, str]]:
    held = await _hold(w)
    confirmed = {"amount": "400", "confirmed": "400", "hold_key": secrets.token_hex(4)}
    return f"/payments/{held.intent_id}/capture", confirmed


async def _void(w: World) -> tuple[str, dict[str, str]]:
    held = await _hold(w)
    return f"/payments/{held.intent_id}/void", {"confirmed": held.payment_id, "hold_key": secrets.token_hex(4)}


async def _endpoint_form(w: World, tail: str, data: dict[str, str]) -> tuple[str, dict[str, str]]:
    return f"/webhooks/{await w.new_endpoint()}{tail}", data


async def _add_connector(w: World) -> tuple[str, dict[str, str]]:
    provider = PROVIDER_IDS[-1]
    await w.connector_id(provider, present=False)
    fields = {"provider": provider, "mode": "MOCK", "priority": "3", "enabled": "on"}
    return f"/providers/{w.app.merchant_account_id}/connectors", fields


async def _change_connector(w: World) -> tuple[str, dict[str, str]]:
    connector = await w.connector_id(PROVIDER_IDS[0], present=True)
    fields = {"action": "priority", "mode": "MOCK", "priority": "5", "enabled": "on"}
    return f"/providers/{w.app.merchant_account_id}/{connector}", fields


async def _remove_connector(w: World) -> tuple[str, dict[str, str]]:
    connector = await w.connector_id(PROVIDER_IDS[-1], present=True)
    return f"/providers/{w.app.merchant_account_id}/{connector}/remove", {}


async def _user_form(w: World, status: str, tail: str, data: dict[str, str]) -> tuple[str, dict[str, str]]:
    return f"/users/{(await w.person(status)).id}{tail}", data


async def _yesterday(w: World) -> tuple[str, dict[str, str]]:
    return "/reconciliation", {"date": (w.runtime.clock.now() - timedelta(days=1)).date().isoformat()}


async def _no_finding(w: World) -> tuple[str, dict[str, str]]:
    # No finding in this world: allowed answers 404 (past the check), refused 403.
    return "/reconciliation/findings/rf_0000000000000000000000000000/resolve", {"note": "checked"}


async def _draft(w: World) -> tuple[str, dict[str, str]]:
    program = '{"default": "priority", "rules": []}'
    return f"/routing/{w.app.merchant_account_id}", {"action": "draft", "program": program}


async def _test_payment(w: World) -> tuple[str, dict[str, str]]:
    fields = {"merchant_account_id": w.app.merchant_account_id, "amount": "1500", "currency": "CLP"}
    return "/sandbox", {**fields, "provider": "auto"}


async def _link_page(w: World) -> tuple[str, dict[str, str] | None]:
    return f"/links/{await w.new_link()}", None


async def _new_link_form(w: World) -> tuple[str, dict[str, str]]:
    fields = {"merchant_account_id": w.app.merchant_account_id, "amount": "1,500", "currency": "CLP"}
    return "/links", {**fields, "description": "made by a role"}


CASES: dict[tuple[str, str], Case] = {
    ("GET", ""): _get(""),
    ("GET", "/overview"): _get("/overview"),
    ("GET", "/activity"): _get("/activity"),
    ("GET", "/payments"): _get("/payments"),
    ("GET", "/payments/{intent_id}"): _get("/payments/{w.intent_id}"),
    ("POST", "/payments/{intent_id}/refunds"): _post(_refund),
    ("POST", "/payments/{intent_id}/capture"): _post(_capture),
    ("POST", "/payments/{intent_id}/void"): _post(_void),
    ("GET", "/exports"): _get("/exports"),
    ("GET", "/exports/download"): _get(
        "/exports/download?kind=payments&format=csv&from=2026-01-01&to=2026-12-31"
    ),
    ("GET", "/reconciliation"): _get("/reconciliation"),
    ("POST", "/reconciliation"): _post(_yesterday),
    ("POST", "/reconciliation/findings/{finding_id}/resolve"): _post(_no_finding),
    ("GET", "/webhooks"): _get("/webhooks"),
    ("POST", "/webhooks"): _post(lambda w: _ready(("/webhooks", {"url": HOOK}))),
    ("GET", "/webhooks/{endpoint_id}"): _get("/webhooks/{w.endpoint_id}"),
    ("POST", "/webhooks/{endpoint_id}"): _post(lambda w: _endpoint_form(w, "", {"action": "disable"})),
    ("POST", "/webhooks/{endpoint_id}/recover"): _post(
        lambda w: _endpoint_form(w, "/recover", {"since": "2026-01-01T00:00:00Z"})
    ),
    ("POST", "/webhooks/{endpoint_id}/delete"): _post(lambda w: _endpoint_form(w, "/delete", {})),
    ("POST", "/webhooks/{endpoint_id}/test"): _post(lambda w: _endpoint_form(w, "/test", {})),
    ("POST", "/webhooks/{endpoint_id}/rotate"): _post(
        lambda w: _endpoint_form(w, "/rotate", {"overlap_seconds": "0"})
    ),
    ("GET", "/webhooks/deliveries"): _get("/webhooks/deliveries"),
    ("GET", "/webhooks/deliveries/{endpoint_id}/{delivery_id}"): _get(
        "/webhooks/deliveries/{w.endpoint_id}/{w.delivery_id}"
    ),
    ("POST", "/webhooks/deliveries/{endpoint_id}/{delivery_id}/retry"): _post(
        lambda w: _ready((f"/webhooks/deliveries/{w.endpoint_id}/{w.delivery_id}/retry", {}))
    ),
    ("GET", "/providers"): _get("/providers"),
    ("POST", "/providers/{merchant_id}/connectors"): _post(_add_connector),
    ("POST", "/providers/{merchant_id}/{connector_id}"): _post(_change_connector),
    ("POST", "/providers/{merchant_id}/{connector_id}/remove"): _post(_remove_connector),
    ("GET", "/routing"): _get("/routing"),
    ("GET", "/routing/{merchant_id}"): _get("/routing/{w.app.merchant_account_id}"),
    ("POST", "/routing/{merchant_id}"): _post(_draft),
    ("GET", "/api-keys"): _get("/api-keys"),
    ("POST", "/api-keys"): _post(lambda w: _ready(("/api-keys", {"name": "made by a role"}))),
    ("POST", "/api-keys/{credential_id}/revoke"): _post(
        lambda w: _with(w.new_key(), lambda key: (f"/api-keys/{key}/revoke", {}))
    ),
    ("GET", "/links"): _get("/links"),
    ("POST", "/links"): _post(_new_link_form),
    ("GET", "/links/{link_id}"): _link_page,
    ("POST", "/links/{link_id}/deactivate"): _post(
        lambda w: _with(w.new_link(), lambda link: (f"/links/{link}/deactivate", {"message": "gone"}))
    ),
    ("GET", "/sandbox"): _get("/sandbox"),
    ("POST", "/sandbox"): _post(_test_payment),
    ("GET", "/sandbox/returned"): _get("/sandbox/returned?payment_intent_id={w.intent_id}"),
    ("GET", "/users"): _get("/users"),
    ("POST", "/users"): _post(
        lambda w: _ready(("/users", {"email": f"n-{secrets.token_hex(4)}@example.com", "role": "viewer"}))
    ),
    ("POST", "/users/{user_id}/role"): _post(
        lambda w: _user_form(w, "INVITED", "/role", {"role": "finance"})
    ),
    ("POST", "/users/{user_id}/disable"): _post(lambda w: _user_form(w, "ACTIVE", "/disable", {})),
    ("POST", "/users/{user_id}/enable"): _post(lambda w: _user_form(w, "DISABLED", "/enable", {})),
    ("POST", "/users/{user_id}/remove"): _post(lambda w: _user_form(w, "INVITED", "/remove", {})),
}


async def _ready(value: tuple[str, dict[str, str]]) -> tuple[str, dict[str, str]]:
    return value


async def _with(
    made: Awaitable[str], build: Callable[[str], tuple[str, dict[str, str]]]
) -> tuple[str, dict[str, str]]:
    return build(await made)


ROUTES = sorted((method, path, scope) for (method, path), scope in PAGES.items() if scope != PUBLIC)


async def snapshot(runtime: Runtime, application_id: str) -> dict[str, list[str]]:
    """Every row of the application in every table but the sessions', as text, sorted: equal
    before and after a refused request when it changed nothing. A table without an
    application_id column is read through the rows it belongs to (a user's codes and passkeys,
    a delivery's attempts, a connector's provider words); the simulated providers' own tables are
    not payorch's and are left out (a checkout of an earlier test may still be moving there)."""
    tables = {table.name: table for table in metadata.sorted_tables}
    users_of_app = select(tables["users"].c.id).where(tables["users"].c.application_id == application_id)
    deliveries = tables["webhook_deliveries"]
    deliveries_of_app = select(deliveries.c.id).where(deliveries.c.application_id == application_id)
    connectors = tables["connectors"]
    connectors_of_app = select(connectors.c.id).where(connectors.c.application_id == application_id)
    rows: dict[str, list[str]] = {}
    async with runtime.phases.reading() as conn:
        for name, table in tables.items():
            if name in NOT_SNAPSHOT or name.startswith("simulator_"):
                continue
            if "application_id" in table.c:
                query = select(table).where(table.c.application_id == application_id)
            elif name == "applications":
                query = select(table).where(table.c.id == application_id)
            elif "user_id" in table.c:
                query = select(table).where(table.c.user_id.in_(users_of_app))
            elif "delivery_id" in table.c:
                query = select(table).where(table.c.delivery_id.in_(deliveries_of_app))
            elif "connector_id" in table.c:  # a provider's words, kept per connector
                query = select(table).where(table.c.connector_id.in_(connectors_of_app))
            else:
                raise AssertionError(f"the snapshot does not know how to read {name} for an application")
            rows[name] = sorted(repr(tuple(row)) for row in (await conn.execute(query)).all())
    return rows


async def sign_in_as_role(client: httpx.AsyncClient, app: Sandbox, role: str) -> str:
    """A person of ``role``: invited (as the operator's command line), the invite accepted and,
    where the role needs it, TOTP enrolled; then signed out and signed in again through the
    public sign-in form (password, and the code where needed). Returns the session's CSRF."""
    email = f"{role}-{secrets.token_hex(4)}@example.com"
    accepted = await accept(client, await invite(client, app, email, role))
    assert accepted.status_code == 303, accepted.text
    secret = ""
    if accepted.headers["location"] == "/dashboard/sign-in/enroll":
        secret, _ = await enroll_totp(client)
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200, overview.text
    assert (await client.post("/dashboard/sign-out", data={"csrf": csrf_of(overview)})).status_code == 303
    client.cookies.clear()
    first = await password_step(client, email, PASSWORD)
    assert first.status_code == 303, first.text
    if secret:
        assert first.headers["location"] == "/dashboard/sign-in/second-factor"
        second = await second_factor_step(client, code_now(client, secret))
        assert second.status_code == 303, second.text
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200, overview.text
    return csrf_of(overview)


def said(answer: httpx.Response) -> str:
    """The page's message (its notice or first alert), for a failure's line."""
    found = re.search(r'<p class="(?:notice|field-error)"[^>]*>(.*?)</p>', answer.text, re.S)
    return found.group(1).strip() if found else answer.text[:200]
