"""templates/pick.html, the pages' test choice beside their buttons: a labelled select whose
options are the page's values, each option's text the page's own, one of them selected if asked.
Driven through two pages that use it (provider D's selects a default, provider A's does not)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from types import SimpleNamespace

from payorch.providers.provider_d.decline_codes import REASONS, REFUSED
from payorch.simulator import pages

AT = datetime(2026, 12, 5, 18, 0, tzinfo=UTC)


def _options(html: str, name: str) -> list[tuple[str, bool, str]]:
    select = re.search(rf'<label for="{name}"[^>]*>[^<]+</label>\s*<select id="{name}" name="{name}"(.*?)</select>', html, re.S)
    assert select is not None, f"no labelled select {name}"
    return [(v, s == " selected", t) for v, s, t in re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select.group(1))]


def test_a_page_lists_its_values_with_its_own_text_and_the_one_selected() -> None:
    session = SimpleNamespace(
        amount=1000, currency="EUR", reference="pi_1.chk_1", expires_at=AT, manual_capture=False, refusals=0,
        status="active", id="CS0123",
    )
    reasons = {code: words for code, (words, _) in REASONS.items()}
    html = pages.render(
        "provider_d/page.html", session=session, merchant="Shop", ended="", reasons=reasons, refused=REFUSED,
        attempts_left=3,
    ).body.decode()
    options = _options(html, "reason")
    assert [value for value, _, _ in options] == list(reasons)
    assert [value for value, selected, _ in options if selected] == [REFUSED]
    assert options[0][2] == f"{reasons[options[0][0]]} ({options[0][0]})"


def test_a_page_without_a_default_selects_none() -> None:
    codes = {-1: "possible error", -2: "failed on the card"}
    transaction = SimpleNamespace(amount=15000, buy_order="o1", token="tok")
    html = pages.render(
        "provider_a/page.html", merchant="Shop", transaction=transaction, currency="CLP", expired=False,
        response_codes=codes, expires_at=AT,
    ).body.decode()
    assert _options(html, "response_code") == [("-1", False, "-1: possible error"), ("-2", False, "-2: failed on the card")]
