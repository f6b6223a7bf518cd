"""The `cursor` and `limit` of a dashboard page showing one page of an API list."""

from __future__ import annotations

from fastapi import Request


def page_values(request: Request) -> dict[str, str]:
    """The request's non-empty `cursor` and `limit`, for the list's query model (which refuses
    a bad one with a 400 page naming it)."""
    params = request.query_params
    return {name: params[name].strip() for name in ("cursor", "limit") if params.get(name, "").strip()}
