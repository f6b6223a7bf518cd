"""The kit's provider timeout: short only for a case that sits one out in real time (the
simulator's `timeout` fault, an answer the network loses: asyncio.timeout in providers/http.py).
Every other case keeps the default: an ordinary in-process call took 2.2 s once on a loaded
two-core machine (CI of stop 48), and a 2 s timeout made it an unknown outcome the case did not
expect."""

from __future__ import annotations

import pytest

WAITED_OUT_SECONDS = 2.0
ORDINARY_SECONDS = 10.0


def provider_timeout(request: pytest.FixtureRequest) -> float:
    params = getattr(request.node, "callspec", None)
    fault = params.params.get("fault") if params is not None else None
    if fault == "timeout" or request.node.get_closest_marker("loses_an_answer") is not None:
        return WAITED_OUT_SECONDS
    return ORDINARY_SECONDS
