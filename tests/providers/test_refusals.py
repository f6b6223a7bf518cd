"""providers/refusals.py: an answer a call did not expect is a refusal (4xx) or unknown (else)."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel

from payorch.providers.base import ProviderRejected, ProviderUnavailable
from payorch.providers.refusals import ErrorBody, Refusals, error_model

PROVIDER = "provider_t_redirect_get"


def _said(operation: str, response: httpx.Response) -> ErrorBody:
    body = response.json() if response.content else {}
    return ErrorBody(body.get("message"), body.get("code"), body.get("reason"))


refusals = Refusals(PROVIDER, _said, unknown=frozenset({429}))


def answer(status: int, body: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body) if body is not None else httpx.Response(status)


def test_a_4xx_is_the_provider_refusing_with_its_words_and_code() -> None:
    refused = refusals("refund", answer(400, {"message": "amount too large", "code": "too_large"}))
    assert isinstance(refused, ProviderRejected)
    assert refused.reason == "refund refused: amount too large"
    assert (refused.provider, refused.code, refused.status_code) == (PROVIDER, "too_large", 400)


def test_a_4xx_without_words_names_its_status() -> None:
    refused = refusals("create", answer(404))
    assert isinstance(refused, ProviderRejected)
    assert refused.reason == "create refused: HTTP 404"
    assert refused.code is None


def test_the_provider_words_and_code_are_cut_to_their_limits() -> None:
    refused = refusals("create", answer(422, {"message": "m" * 500, "code": "c" * 100}))
    assert refused.reason == "create refused: " + "m" * 300
    assert refused.code == "c" * 64


def test_a_reason_the_provider_package_gives_is_the_whole_reason() -> None:
    refused = refusals("refund", answer(422, {"message": "x", "code": "311", "reason": "refund window over"}))
    assert isinstance(refused, ProviderRejected)
    assert refused.reason == "refund window over"
    assert refused.code == "311"


@pytest.mark.parametrize("status", [201, 302, 429])
def test_anything_else_or_a_slow_down_leaves_the_outcome_unknown(status: int) -> None:
    unknown = refusals("expire", answer(status, {"message": "not read"}))
    assert isinstance(unknown, ProviderUnavailable)
    assert not isinstance(unknown, ProviderRejected)
    assert unknown.reason == f"expire: unexpected HTTP {status}"
    assert (unknown.provider, unknown.code) == (PROVIDER, str(status))


def test_without_unknown_statuses_a_429_is_a_refusal() -> None:
    refused = Refusals(PROVIDER, _said)("create", answer(429))
    assert isinstance(refused, ProviderRejected)


class _Said(BaseModel):
    message: str


def test_an_error_body_reads_as_the_providers_model_or_says_nothing() -> None:
    empty = _Said(message="")
    assert error_model(_Said, answer(400, {"message": "no"}), empty) == _Said(message="no")
    assert error_model(_Said, answer(400, {"other": "shape"}), empty) is empty
    assert error_model(_Said, httpx.Response(502, content=b"<html>bad gateway</html>"), empty) is empty
