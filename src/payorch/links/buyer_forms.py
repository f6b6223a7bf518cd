"""The buyer pages' forms (a payment link's Pay, the second chance's button): public pages with no
session, so a form's CSRF token is double submitted with a cookie, and the buyer's language is
the one chosen in the form or the query, else the browser's."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.links.buyer_text import language_of


def language(request: Request, chosen: str | None = None) -> str:
    return language_of(chosen or request.query_params.get("lang"), request.headers.get("accept-language"))


async def posted(request: Request) -> tuple[FormData, str]:
    """The form a buyer posted and the language it asks for."""
    form = await request.form()
    chosen = form.get("lang")
    return form, language(request, chosen if isinstance(chosen, str) else None)


@dataclass(frozen=True)
class FormToken:
    """A page's form token: kept in ``cookie`` (sent only under ``path``) and in the form."""

    cookie: str
    path: str

    def current(self, request: Request) -> str:
        """The token the browser holds, or a new one."""
        return request.cookies.get(self.cookie) or secrets.token_urlsafe(32)

    def keep(self, response: Response, token: str, public_url: str) -> Response:
        secure = public_url.startswith("https://")
        response.set_cookie(
            self.cookie, token, httponly=True, samesite="strict", secure=secure, path=self.path
        )
        return response

    def matches(self, request: Request, form: FormData) -> bool:
        """The form's token is the cookie's (a form from another site has no cookie of ours)."""
        submitted, expected = form.get("csrf"), request.cookies.get(self.cookie) or ""
        if not isinstance(submitted, str) or not expected:
            return False
        return hmac.compare_digest(expected.encode(), submitted.encode())
