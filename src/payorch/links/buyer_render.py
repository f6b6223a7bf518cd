"""How the buyer's pages are drawn: their templates, their words in the buyer's language
(payorch.links.buyer_text) and their security headers. Every asset is the service's own."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse, Response

from payorch.dashboard.web import secure_headers
from payorch.links.buyer_text import LANGUAGES, WORDS

ASSETS = Path(__file__).parent / "assets"
_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
# No script at all; forms go to this service. "Pay" answers with a redirect to the provider's
# page, which a form-action of 'self' would block in browsers that check redirects: the page
# with the Pay form states none; the provider's POST form names the provider's origin.
_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"
)


def page(
    template: str,
    lang: str,
    context: dict[str, object],
    *,
    status: int = 200,
    form_to: str | None = None,
) -> Response:
    """``template`` in ``lang``; ``form_to``: the one origin (besides ours) its form may post to."""
    html = _ENV.get_template(template).render(lang=lang, t=WORDS[lang], languages=LANGUAGES, **context)
    response = HTMLResponse(html, status_code=status, headers={"Content-Language": lang})
    policy = _POLICY
    if form_to is not None:
        parts = urlsplit(form_to)
        policy += f"; form-action 'self' {parts.scheme}://{parts.netloc}"
    return secured(response, policy)


def secured(response: Response, policy: str = _POLICY) -> Response:
    return secure_headers(response, policy, referrer="no-referrer")


def stylesheet() -> Response:
    css = (ASSETS / "pay.css").read_bytes()
    response = Response(css, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})
    return secured(response)
