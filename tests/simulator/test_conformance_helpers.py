"""The conformance kit's helpers for drivers (simulator/conformance.py): the grid of status cases,
a URL's query fields, a page's key in its URL, and the books read from the simulator's API."""

from __future__ import annotations

import httpx
import pytest

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.simulator.conformance import Visit, query_of, read_books, status_grid


def test_the_grid_reads_every_combination_first_axis_outermost() -> None:
    read_with: list[tuple[object, ...]] = []

    def read(*values: object) -> object:
        read_with.append(values)
        return lambda: PaymentResult(PaymentOutcome.NOT_PAID, reason=repr(values))

    cases = status_grid(read, {"open": "o", "done": "d"}, {"unpaid": False, "paid": True})
    assert [c.label for c in cases] == ["open/unpaid", "open/paid", "done/unpaid", "done/paid"]
    assert read_with == [("o", False), ("o", True), ("d", False), ("d", True)]
    assert cases[3].read().reason == "('d', True)"
    assert [c.label for c in status_grid(read, {"one": 1})] == ["one"]


def test_a_urls_query_fields_keep_blank_ones() -> None:
    assert query_of("https://shop.test/back?a=1&b=&c=x%20y") == {"a": "1", "b": "", "c": "x y"}
    assert query_of(None) == {}


def test_a_pages_key_is_its_urls_last_segment() -> None:
    visit = Visit("app_1", "pi_1", "https://sim.test/simulator/x/pay/CS0123/", {})
    assert visit.page_key == "CS0123"


async def test_books_are_the_simulators_json_and_an_error_status_fails() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200 if request.url.path == "/books" else 404, json={"held": 5})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer), base_url="https://sim.test") as http:
        assert await read_books(http, "/books", headers={"X-Key": "k"}, params={"q": "1"}) == {"held": 5}
        with pytest.raises(httpx.HTTPStatusError):
            await read_books(http, "/elsewhere", headers={})
    assert seen[0].headers["X-Key"] == "k" and seen[0].url.params["q"] == "1"
