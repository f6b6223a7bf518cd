"""Helpers shared by the tests of this directory."""

from __future__ import annotations

from typing import Any

MEASURED = 20  # attempts before a provider has a rate (success_rates/build.py)


def scores(body: dict[str, Any]) -> dict[str, Any]:
    return {c["provider"]: c["score"] for c in body["routing"]["candidates"]}
