"""simulator/pages.py ``render``: every page is self-contained (no outside resource, no framing,
never cached); a page with no script of its own runs none (``scripts=False``)."""

from __future__ import annotations

from payorch.simulator import pages


def test_a_page_forbids_outside_resources_and_runs_its_own_scripts_only_if_it_has_some() -> None:
    with_scripts = pages.render("autopost.html", url="https://shop.test/back", fields={}, brand="X")
    csp = with_scripts.headers["content-security-policy"]
    assert csp == (
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action *; "
        "frame-ancestors 'none'"
    )
    without = pages.render("message.html", 404, scripts=False, title="T", brand="X", message="M")
    assert without.status_code == 404
    assert without.headers["content-security-policy"] == (
        "default-src 'none'; style-src 'unsafe-inline'; form-action *; frame-ancestors 'none'"
    )
    assert (without.headers["cache-control"], without.headers["referrer-policy"]) == ("no-store", "no-referrer")
