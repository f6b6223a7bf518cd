"""Rendering of the simulator's pages: one Jinja2 environment, money in the buyer's format."""

from __future__ import annotations

import functools
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from babel import Locale
from babel.numbers import format_currency
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.background import BackgroundTask
from starlette.responses import HTMLResponse

from payorch.money import exponent

_HERE = Path(__file__).parent
_ENV = Environment(
    # The shared templates by their name ("message.html"); a provider's own page in its package,
    # by its path from here ("provider_x/page.html").
    loader=FileSystemLoader([_HERE / "templates", _HERE]),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # the templates are package files: no stat of each one per page
)

# The locale whose conventions a buyer of that currency expects (fallback: English), parsed
# once: babel parses a locale given by name on every call.
_LOCALES = {
    currency: Locale.parse(name)
    for currency, name in {
        "CLP": "es_CL",
        "ARS": "es_AR",
        "BRL": "pt_BR",
        "MXN": "es_MX",
        "COP": "es_CO",
        "PEN": "es_PE",
        "UYU": "es_UY",
        "USD": "en_US",
        "EUR": "es_ES",
    }.items()
}
_FALLBACK = Locale.parse("en_US")


@functools.lru_cache(maxsize=1024)
def money(amount: Decimal | int, currency: str) -> str:
    """``1500`` CLP -> ``$1.500``; ``10.5`` USD -> ``$10.50`` (currency's own decimals).

    Kept per amount and currency: a page shows its amount twice or more (its title, the amount,
    an item's line), and each babel format is a tenth of the page's rendering (27 of 260 us for
    provider A's page on a busy machine, 2026-12-05)."""
    locale = _LOCALES.get(currency, _FALLBACK)
    return format_currency(Decimal(str(amount)), currency, locale=locale)


def minor_money(amount: int, currency: str) -> str:
    """``1050`` USD (minor units, as providers count) -> ``$10.50``."""
    return money(Decimal(amount).scaleb(-(exponent(currency) or 0)), currency)


_ENV.filters["money"] = money
_ENV.filters["minor_money"] = minor_money


def with_query(url: str, fields: dict[str, str]) -> str:
    """``url`` with ``fields`` added to its query string (what it already has is kept)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(fields.items())
    return urlunsplit(parts._replace(query=urlencode(query)))


_ENV.filters["with_query"] = with_query


def render(
    template: str,
    status_code: int = 200,
    *,
    background: BackgroundTask | None = None,
    scripts: bool = True,
    **context: object,
) -> HTMLResponse:
    """``template`` rendered; ``scripts=False`` for a page with no script of its own (none runs)."""
    html = _ENV.get_template(template).render(**context)
    # The pages are self-contained; forbid any outside resource and framing by other sites.
    headers = {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
        + ("script-src 'unsafe-inline'; " if scripts else "")
        + "form-action *; frame-ancestors 'none'",
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
    }
    return HTMLResponse(html, status_code=status_code, headers=headers, background=background)


LINK_NOT_VALID = "This payment link is not valid. Go back to the shop and start the payment again."


def unknown_link(title: str, brand: str) -> HTMLResponse:
    """404: the page's key (token, preference id) is not known."""
    return render("message.html", 404, title=title, brand=brand, message=LINK_NOT_VALID)


def no_outcome_chosen(brand: str) -> HTMLResponse:
    """400: the form came without one of the page's buttons."""
    return render(
        "message.html",
        400,
        title="Choose an outcome",
        brand=brand,
        message="Go back and press one of the buttons.",
    )
