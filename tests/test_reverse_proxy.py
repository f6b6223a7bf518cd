"""deploy/nginx/payorch.conf in front of a live `payorch serve`, with Debian's nginx.

The shipped file is rendered as it is (placeholders filled), with only its timeouts and
per-address limit shortened so the test runs in seconds.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.live import live_server, payorch_env
from tests.nginx import HEADER_TIMEOUT, TEMPLATE, _nginx, nginx_serving, render
from tests.rawhttp import address, assert_error_shape, connect, read_answer

pytestmark = pytest.mark.slow

NGINX_REQUEST_ID = r"[0-9a-f]{32}"  # $request_id, forwarded to payorch as X-Request-Id


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _nginx()
    prefix = tmp_path_factory.mktemp("nginx")
    env = payorch_env(f"sqlite:///{prefix}/p.db")
    with live_server(env, "--no-worker") as upstream:
        config = render(upstream.removeprefix("http://"), "${PAYORCH_LISTEN}")
        with nginx_serving(prefix, config) as url:
            yield url


# The header comment's command (deploy/nginx/payorch.conf), on this test's replicas ("$@").
ENVSUBST = (
    'PAYORCH_UPSTREAM_SERVERS="$(printf \'server %s; \' "$@")" '
    "envsubst '${PAYORCH_UPSTREAM_SERVERS}' < \"$0\""
)


def answered(replica: str, status: str) -> float:
    """Requests the replica itself counted with ``status`` (its own /metrics, read directly)."""
    metrics = httpx.get(replica + "/metrics").text
    return sum(
        float(line.rsplit(" ", 1)[1])  # a route template holds braces too: no regex over the labels
        for line in metrics.splitlines()
        if line.startswith("payorch_http_requests_total{") and f'status="{status}"' in line
    )


def test_three_replicas_share_the_requests_and_a_stopped_one_is_skipped(tmp_path: Path) -> None:
    _nginx()
    env = payorch_env(f"sqlite:///{tmp_path}/p.db")
    replicas = [ExitStack() for _ in range(3)]
    with replicas[0], replicas[1], replicas[2]:
        bases = [replica.enter_context(live_server(env, "--no-worker")) for replica in replicas]
        addresses = [base.removeprefix("http://") for base in bases]
        config = render(addresses, "${PAYORCH_LISTEN}")
        # render() fills the servers as the template's header comment does, with envsubst.
        documented = subprocess.run(
            ["sh", "-c", ENVSUBST, str(TEMPLATE), *addresses], capture_output=True, text=True, check=True
        ).stdout
        block = re.compile(r"upstream payorch \{[^}]*\}")
        assert block.findall(config) == block.findall(documented)
        assert block.findall(config)[0].count("server 127.0.0.1:") == 3
        with nginx_serving(tmp_path, config) as proxy:
            before = [answered(base, "401") for base in bases]  # live_server's own probe
            for _ in range(9):
                assert httpx.get(proxy + "/v1/payment-intents/payi_x").status_code == 401
            # In turn: each replica answered three (nginx's round robin, equal weights).
            counts = [answered(base, "401") - earlier for base, earlier in zip(bases, before, strict=True)]
            assert counts == [3, 3, 3]
            replicas[1].close()  # the second replica stops: nginx passes its turns to the others
            for _ in range(6):
                response = httpx.get(proxy + "/v1/payment-intents/payi_x")
                assert response.status_code == 401, response.text
            assert answered(bases[0], "401") + answered(bases[2], "401") - before[0] - before[2] == 12


def test_api_requests_pass_through_with_nginx_request_id(proxy: str) -> None:
    response = httpx.get(proxy + "/v1/payment-intents/payi_x")
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == "AUTHENTICATION_FAILED"
    # payorch reused the id nginx generated and forwarded ($request_id: 32 hex digits).
    assert (
        re.fullmatch(NGINX_REQUEST_ID, error["request_id"])
        and response.headers["x-request-id"] == error["request_id"]
    )


def test_internal_paths_are_not_exposed(proxy: str) -> None:
    response = httpx.get(proxy + "/metrics")
    assert response.status_code == 404 and response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"


def test_nginx_closes_a_partial_request_line_after_client_header_timeout(proxy: str) -> None:
    with connect(address(proxy)) as sock:
        sock.sendall(b"GET /v1/payment-inte")
        started = time.monotonic()
        # Closed without an answer, not before the timeout (the wait bounds a hang, no budget).
        assert read_answer(sock, timeout=HEADER_TIMEOUT + 60) == b""
        assert HEADER_TIMEOUT - 0.5 <= time.monotonic() - started


def test_a_body_over_64_kib_is_refused_by_nginx_in_the_error_shape(proxy: str) -> None:
    response = httpx.post(
        proxy + "/v1/payment-intents",
        content=b"x" * (65 * 1024),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413 and response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


def test_a_second_request_from_one_address_over_limit_conn_gets_503(proxy: str) -> None:
    target = address(proxy)
    with connect(target) as busy:
        # Headers read, body awaited: nginx counts this connection for the address.
        busy.sendall(b"POST /v1/payment-intents HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
        deadline = time.monotonic() + 5
        while True:
            with connect(target) as second:
                second.sendall(
                    b"GET /v1/payment-intents/payi_x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                )
                answer = read_answer(second, timeout=5)
            if answer.startswith(b"HTTP/1.1 503") or time.monotonic() > deadline:
                break
    error = assert_error_shape(answer, 503, "SERVICE_UNAVAILABLE", request_id=NGINX_REQUEST_ID)
    assert error["retry-after"] == "1" and error["details"] == {"retry_after_seconds": 1}


def test_malformed_http_is_refused_by_nginx_in_the_error_shape(proxy: str) -> None:
    with connect(address(proxy)) as sock:
        sock.sendall(
            b"GET /v1/payment-intents HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
        )
        answer = read_answer(sock, timeout=5)
    assert_error_shape(answer, 400, "MALFORMED_REQUEST", request_id=NGINX_REQUEST_ID)
