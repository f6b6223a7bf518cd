"""Dependencies stay shallow (payorch.http.deps): FastAPI solves each one with its own pass over
the request, nested and cached ones too, so on the API no dependency has dependencies of its own
and the runtime is reached by ``runtime_of(request)``. The caller is still checked before the
body is validated: a request without a valid key is answered 401 whatever its body."""

from __future__ import annotations

import httpx
import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from payorch.app import create_app, create_in_process_app
from payorch.runtime import Runtime
from tests.kit import Sandbox

API_PREFIXES = ("/v1/", "/simulator/")


def _nested(dependant: Dependant) -> list[str]:
    """The dependencies of ``dependant``'s dependencies, by name."""
    return [
        getattr(inner.call, "__name__", repr(inner.call))
        for outer in dependant.dependencies
        for inner in outer.dependencies
    ]


async def test_no_api_dependency_has_dependencies_of_its_own(runtime: Runtime) -> None:
    checked = 0
    for app in (create_app(runtime), create_in_process_app(runtime)):
        for route in app.routes:
            if isinstance(route, APIRoute) and route.path.startswith(API_PREFIXES):
                assert _nested(route.dependant) == [], (route.path, route.methods)
                checked += 1
    assert checked > 40


@pytest.mark.parametrize(
    "path",
    ["/v1/payment-intents", "/v1/payment-intents/payi_x/checkout", "/v1/payment-intents/payi_x/cancel"],
)
@pytest.mark.parametrize("authorization", [None, "Bearer pay_sb_wrong_key"])
async def test_a_caller_without_a_valid_key_is_refused_before_the_body_is_read(
    client: httpx.AsyncClient, sandbox: Sandbox, path: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    answer = await client.post(path, json={"amount": "not a number", "unknown": 1}, headers=headers)
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"]["code"] == "AUTHENTICATION_FAILED"
    # With the key, the same body is the caller's mistake to fix.
    answer = await client.post(path, json={"amount": "not a number", "unknown": 1}, headers=sandbox.headers)
    assert answer.status_code == 400, answer.text
