"""The container image (Containerfile, docs/deployment.md "The container image"), built here with
podman (runc) on a Debian bookworm base made by debootstrap, and run as an operator would:
`payorch migrate`, `payorch serve` and `payorch worker` in read-only containers on the host's
network against the host's PostgreSQL and Redis; a whole sandbox payment (intent, checkout, the
simulator's page, the buyer's return) and its signed webhook go through them.

Skipped without podman, runc or debootstrap on a developer's machine; in CI (.ci/run installs
them) their absence is a failure. A first run builds the base (debootstrap, about a minute) and
fills deploy/wheelhouse; later runs reuse both and podman's layers.
"""

from __future__ import annotations

import asyncio
import json
import secrets

import httpx
import pytest

from payorch import __version__
from payorch.client import PayorchClient
from payorch.providers.registry import PROVIDER_IDS
from tests.client.buyer import pay
from tests.client.signed_receiver import wait_for_events, webhook_receiver
from tests.databases import create_postgres_database, drop_postgres_database
from tests.deploy.podman import LIMITS, ROOT, build_image, container, payorch, podman, tools, uv_version
from tests.kit import TEST_SECRET_KEY
from tests.live import free_port, wait_until_answering

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture(scope="module")
def image() -> str:
    tools()
    return build_image()


def test_the_image_is_what_it_claims(image: str) -> None:
    inspected = json.loads(podman("image", "inspect", image).stdout)[0]
    config = inspected["Config"]
    assert config["Entrypoint"] == ["payorch"]
    assert config["User"] == "payorch:payorch"
    assert list(config["Volumes"]) == ["/data"]
    assert "/healthz" in " ".join(inspected["Healthcheck"]["Test"])
    # No compiler, no pip, no source tree or tests; the user is not root.
    probe = (
        "import importlib.util, json, os, shutil; print(json.dumps({'uid': os.getuid(),"
        " 'tools': [t for t in ('gcc', 'cc', 'make', 'uv') if shutil.which(t)],"
        " 'pip': importlib.util.find_spec('pip') is not None,"
        " 'source': [p for p in ('/src', '/dist', '/wheelhouse', '/tests') if os.path.exists(p)],"
        " 'tests': importlib.util.find_spec('tests') is not None}))"
    )
    done = podman("run", "--rm", "--read-only", *LIMITS, "--entrypoint", "python3", image, "-c", probe)
    assert json.loads(done.stdout) == {"uid": 10001, "tools": [], "pip": False, "source": [], "tests": False}
    # The declared data directory is the one writable place: the embedded default (SQLite and
    # its key file in /data) migrates in a read-only container.
    podman("run", "--rm", "--read-only", *LIMITS, image, "migrate")
    # The installed release is this checkout's (its wheel built from src/ in the image).
    assert podman("run", "--rm", *LIMITS, image, "--version").stdout.split() == [
        "payorch",
        __version__,
    ]


def test_a_sandbox_payment_and_its_webhook_through_the_image(image: str) -> None:
    database_url, admin = asyncio.run(create_postgres_database())
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
        "PAYORCH_REDIS_URL": REDIS_URL,
        "PAYORCH_PUBLIC_URL": base,
        "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on loopback
        "HEALTHCHECK_PORT": str(port),
    }
    tag = secrets.token_hex(4)
    try:
        payorch(env, "migrate")
        app = json.loads(
            payorch(env, "applications", "create", "--name", "shop", "--environment", "SANDBOX",
                    "--mock-connectors", "--json")
        )  # fmt: skip
        with (
            container(f"payorch-api-{tag}", env, "serve", "--no-worker", "--host", "127.0.0.1",
                      "--port", str(port)) as api,
            container(f"payorch-worker-{tag}", env, "worker"),
            webhook_receiver() as (host, receiver),
            PayorchClient(app["api_key"], base) as client,
        ):  # fmt: skip
            wait_until_answering(base, timeout=90)
            assert httpx.get(f"{base}/readyz", timeout=5).status_code == 200  # migrated, reachable
            podman("healthcheck", "run", api)  # the image's own HEALTHCHECK passes

            endpoint = client.create_webhook_endpoint(url=f"http://{host}:8080/hooks")
            assert endpoint.secret is not None
            receiver.secret = endpoint.secret.get_secret_value()
            intent = client.create_payment_intent(
                merchant_account_id=app["merchant_account_id"],
                external_reference="order-1",
                amount=1500,
                currency="CLP",
                return_url="https://shop.example/return",
            )
            checkout = client.create_checkout(intent.id, provider=PROVIDER_IDS[0])
            assert checkout.checkout.url.startswith(base)  # the simulator, in the container
            returned = pay(checkout, "approve")
            assert returned["payment_intent_id"] == [intent.id]
            assert client.get_payment_intent(intent.id).status == "AUTHORIZED"

            wait_for_events(receiver, {(intent.id, "payment.authorized")})  # sent by the worker
            assert receiver.rejected == 0
    finally:
        asyncio.run(drop_postgres_database(database_url, admin))


def test_the_containerfile_installs_the_makefiles_uv() -> None:
    """The image exports uv.lock with the uv that `make` installs (its default build argument)."""
    assert f"ARG UV_VERSION={uv_version()}\n" in (ROOT / "Containerfile").read_text()
    assert f'"uv=={uv_version()}"' in (ROOT / "docs" / "deployment.md").read_text()  # the offline fill
