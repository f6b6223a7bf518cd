"""payorch-client, the client's own distribution (clients/python), as a shop installs it: its wheel
is built from a copy of the checkout and installed with its dependencies from pip's configured
index into a fresh virtual environment that holds nothing else (no server package, none of the
server's dependencies), then drives a whole sandbox payment against a running `payorch serve`:
intent, checkout, the simulator's page, payorch's return, the intent read back AUTHORIZED. Its
version is the server's. Beside the server's wheel (which leaves the client out), both install
into one environment without sharing a file, and both import."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import payorch
from tests.live import create_sandbox, live_server, payorch_env
from tests.wheels import (
    ROOT,
    build_client_wheel,
    build_wheel,
    clean_env,
    install_beside_project_dependencies,
    new_venv,
    pip_into,
    run,
)

pytestmark = pytest.mark.slow

# Run by the fresh environment's Python: every distribution installed there is payorch-client or
# something it needs (its requirements, recursively, extras left out; one whose marker excludes
# this Python is not installed and not followed), and payorch is only the client's namespace:
# payorch/__init__.py (the server's) is nowhere.
WHAT_IS_INSTALLED = """
import json, re
from importlib.metadata import distribution, distributions
import payorch, payorch.client

def name(text):
    return re.split(r"[ ;<>=!~\\[(]", text.strip(), maxsplit=1)[0].lower().replace("_", "-")

installed = sorted(name(d.metadata["Name"]) for d in distributions())
needed, queue = set(), ["payorch-client"]
while queue:
    wanted = queue.pop()
    if wanted not in needed:
        needed.add(wanted)
        requires = [name(r) for r in distribution(wanted).requires or [] if "extra ==" not in r]
        queue += [r for r in requires if r in installed]
print(json.dumps({
    "installed": installed,
    "needed": sorted(needed),
    "namespace": getattr(payorch, "__file__", None) is None and not hasattr(payorch, "__version__"),
    "version": payorch.client.__version__,
    "metadata_version": distribution("payorch-client").version,
}))
"""

# A shop's whole sandbox payment through the installed client, then what it imported of payorch.
A_PAYMENT = """
import json, sys
from buyer import pay
from payorch.client import PayorchClient

base, key, merchant = sys.argv[1:4]
with PayorchClient(key, base) as client:
    intent = client.create_payment_intent(
        merchant_account_id=merchant, external_reference="client-package-1", amount=1500,
        currency="CLP", return_url="https://shop.example/return",
    )
    checkout = client.create_checkout(intent.id)
    returned = pay(checkout, "approve")
    read = client.get_payment_intent(intent.id)
print(json.dumps({
    "intent": intent.id,
    "returned": returned["payment_intent_id"],
    "status": read.status,
    "authorization_code": read.payment.authorization_code if read.payment else None,
    "modules": sorted(m for m in sys.modules if m == "payorch" or m.startswith("payorch.")),
}))
"""


@dataclass(frozen=True)
class ClientVenv:
    work: Path
    wheel: Path
    python: Path


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> ClientVenv:
    work = tmp_path_factory.mktemp("client-package")
    wheel = build_client_wheel(work)
    python = new_venv(work / "venv")
    run([*pip_into(python), "install", "-q", str(wheel)], work)  # httpx, pydantic from the index
    shutil.copy(ROOT / "tests" / "client" / "buyer.py", work / "buyer.py")  # httpx and the client only
    return ClientVenv(work=work, wheel=wheel, python=python)


def in_venv(venv: ClientVenv, script: str, *args: str) -> dict[str, Any]:
    done = run([str(venv.python), "-c", script, *args], venv.work, clean_env())
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_the_client_wheel_carries_the_client_only(client_venv: ClientVenv) -> None:
    with zipfile.ZipFile(client_venv.wheel) as wheel:
        packaged = {n for n in wheel.namelist() if not n.startswith("payorch_client-")}
        metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip()
            for line in wheel.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    client = ROOT / "src" / "payorch" / "client"
    assert packaged == {f"payorch/client/{p.name}" for p in client.glob("*.py")}
    assert sorted(r.split(">")[0] for r in requires) == ["httpx", "pydantic"], requires


def test_installed_alone_it_needs_nothing_but_httpx_and_pydantic(client_venv: ClientVenv) -> None:
    found = in_venv(client_venv, WHAT_IS_INSTALLED)
    assert found["installed"] == found["needed"], found
    assert {"httpx", "pydantic", "payorch-client"} <= set(found["needed"])
    assert not {"payorch", "fastapi", "sqlalchemy", "starlette"} & set(found["installed"])
    assert found["namespace"] is True


def test_its_version_is_the_servers(client_venv: ClientVenv) -> None:
    found = in_venv(client_venv, WHAT_IS_INSTALLED)
    assert found["version"] == found["metadata_version"] == payorch.__version__
    assert client_venv.wheel.name.startswith(f"payorch_client-{payorch.__version__}-")


@pytest.fixture
def live(database_url: str) -> Iterator[tuple[str, dict[str, str]]]:
    env = payorch_env(database_url)
    with live_server(env, "--no-worker") as base:
        yield base, create_sandbox(env)


def test_a_whole_sandbox_payment_through_the_installed_client(
    client_venv: ClientVenv, live: tuple[str, dict[str, str]]
) -> None:
    base, sandbox = live
    paid = in_venv(client_venv, A_PAYMENT, base, sandbox["api_key"], sandbox["merchant_account_id"])
    assert paid["returned"] == [paid["intent"]] and paid["status"] == "AUTHORIZED", paid
    assert paid["authorization_code"], paid
    modules: list[str] = paid["modules"]
    assert all(m == "payorch" or m.startswith("payorch.client") for m in modules), modules


def test_beside_the_server_both_install_without_sharing_a_file(
    client_venv: ClientVenv, tmp_path: Path
) -> None:
    """The server's wheel and the client's into one environment (the server's dependencies come
    from the project's, as tests/test_installed_wheel.py does): no file in both wheels, the
    server's payorch and the client's payorch.client both import from it, each a version alike."""
    server_wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(server_wheel) as one, zipfile.ZipFile(client_venv.wheel) as other:
        files = [{n for n in w.namelist() if ".dist-info/" not in n} for w in (one, other)]
    assert files[0] & files[1] == set()
    python = new_venv(tmp_path / "both")
    install_beside_project_dependencies(python, server_wheel, tmp_path)
    run([*pip_into(python), "install", "-q", "--no-deps", "--no-index", str(client_venv.wheel)], tmp_path)
    shown = run(
        [
            str(python),
            "-c",
            "import json, payorch, payorch.app, payorch.client as c; "
            "print(json.dumps([payorch.__file__, c.__file__, payorch.__version__, c.__version__]))",
        ],
        tmp_path,
        clean_env(),
    )
    server_file, client_file, server_version, client_version = json.loads(shown.stdout)
    venv = tmp_path / "both"
    assert Path(server_file).is_relative_to(venv) and Path(client_file).is_relative_to(venv)
    assert server_version == client_version == payorch.__version__
