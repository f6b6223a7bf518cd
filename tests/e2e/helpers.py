"""Helpers shared by the tests of this directory."""

from __future__ import annotations

import html

RETURN_URL = "https://shop.example/return"


async def open_checkout(page, checkout: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    """The consumer sends the browser to the checkout; answer once the simulator page is up."""
    if checkout["method"] == "POST":
        await page.set_content(consumer_page(checkout))
        async with page.expect_navigation():
            await page.click("#pay button")
    else:
        await page.goto(checkout["url"])
    await page.wait_for_selector('button[name="outcome"][value="approve"]')


def consumer_page(checkout: dict) -> str:  # type: ignore[type-arg]
    """What a consumer's page does with a POST checkout: a form of hidden fields, submitted."""
    inputs = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in checkout["fields"].items()
    )
    return (
        "<!doctype html><title>Shop</title>"
        f'<form id="pay" method="POST" action="{html.escape(checkout["url"])}">{inputs}'
        '<button type="submit">Pay</button></form>'
    )
