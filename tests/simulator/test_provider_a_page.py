"""Provider A's payment page, submitted as a browser would, and the four return shapes."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.simulator.helpers import (
    A_API,
    A_PAGE,
    RETURN_A,
    a_headers,
    create_a,
    decide_a,
    query_of,
)


async def test_page_shows_amount_merchant_order_and_the_outcome_buttons(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(sim, a_headers(runtime, sandbox.application_id), amount=125990, buy_order="ORD-77")
    page = await sim.post(A_PAGE, data={"token_ws": token})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "$125.990" in page.text and "shop" in page.text and "ORD-77" in page.text
    buttons = re.findall(r'<button[^>]*name="outcome" value="(\w+)"', page.text)
    assert buttons == ["approve", "reject", "cancel", "timeout", "error"]
    assert f'name="token_ws" value="{token}"' in page.text
    assert "http" not in page.text.split("<body>")[1].split("</main>")[0].replace(
        A_PAGE, ""
    )  # no outside asset
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert (await sim.get(A_PAGE, params={"token_ws": token})).status_code == 200


async def test_unknown_token_page_is_404(sim: httpx.AsyncClient) -> None:
    page = await sim.post(A_PAGE, data={"token_ws": "nope"})
    assert page.status_code == 404 and "not valid" in page.text
    assert (await sim.post(A_PAGE)).status_code == 404
    assert (await decide_a(sim, "nope", "approve")).status_code == 404
    assert (await decide_a(sim, "nope", "steal")).status_code == 400


@pytest.mark.parametrize("outcome", ["approve", "reject"])
async def test_normal_end_returns_only_token_ws_by_get(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, outcome: str
) -> None:
    token = await create_a(sim, a_headers(runtime, sandbox.application_id), intent_id="payi_n")
    back = await decide_a(sim, token, outcome)
    assert back.status_code == 303
    assert back.headers["location"] == f"{RETURN_A}payi_n?token_ws={token}"


async def test_timeout_returns_order_and_session_only(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(sim, a_headers(runtime, sandbox.application_id), buy_order="o-9", session_id="s-9")
    back = await decide_a(sim, token, "timeout")
    assert back.status_code == 303
    assert query_of(back) == {"TBK_ORDEN_COMPRA": "o-9", "TBK_ID_SESION": "s-9"}


async def test_error_page_returns_token_ws_and_tbk_token(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(sim, a_headers(runtime, sandbox.application_id))
    back = await decide_a(sim, token, "error")
    assert back.status_code == 303 and query_of(back) == {"token_ws": token, "TBK_TOKEN": token}


async def test_abort_comes_back_as_an_auto_submitted_post_form(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(
        sim,
        a_headers(runtime, sandbox.application_id),
        intent_id="payi_c",
        buy_order="o-3",
        session_id="s-3",
    )
    back = await decide_a(sim, token, "cancel")
    assert back.status_code == 200
    assert f'method="post" action="{RETURN_A}payi_c"' in back.text
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', back.text))
    assert fields == {"TBK_TOKEN": token, "TBK_ORDEN_COMPRA": "o-3", "TBK_ID_SESION": "s-3"}
    assert ".submit()" in back.text


async def test_return_url_query_is_kept(sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> None:
    token = await create_a(
        sim, a_headers(runtime, sandbox.application_id), return_url="https://shop.example/r?a=1"
    )
    back = await decide_a(sim, token, "approve")
    assert back.headers["location"] == f"https://shop.example/r?a=1&token_ws={token}"


async def test_second_choice_changes_nothing(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers)
    await decide_a(sim, token, "approve")
    again = await decide_a(sim, token, "reject")
    assert again.status_code == 409 and "already finished" in again.text
    assert f'value="{token}"' in again.text  # the way back carries the first result's shape
    reopened = await sim.post(A_PAGE, data={"token_ws": token})
    assert reopened.status_code == 409
    assert (await sim.put(f"{A_API}/{token}", headers=headers)).json()["status"] == "AUTHORIZED"


async def test_expired_page_only_times_out(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = a_headers(runtime, sandbox.application_id)
    token = await create_a(sim, headers, buy_order="o-5", session_id="s-5")
    clock.advance(301)
    page = await sim.post(A_PAGE, data={"token_ws": token})
    assert page.status_code == 200 and "expired" in page.text
    assert re.findall(r'name="outcome" value="(\w+)"', page.text) == ["timeout"]
    back = await decide_a(sim, token, "approve")  # a stale form still pressed
    assert query_of(back) == {"TBK_ORDEN_COMPRA": "o-5", "TBK_ID_SESION": "s-5"}
    assert (await sim.get(f"{A_API}/{token}", headers=headers)).json()["status"] == "FAILED"


async def test_way_back_from_a_finished_page_keeps_the_shop_query(
    sim: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    token = await create_a(
        sim, a_headers(runtime, sandbox.application_id), return_url="https://shop.example/r?a=1"
    )
    await decide_a(sim, token, "approve")
    page = await sim.post(A_PAGE, data={"token_ws": token})
    assert page.status_code == 409
    assert f'href="https://shop.example/r?a=1&amp;token_ws={token}"' in page.text  # a link, not a GET form
