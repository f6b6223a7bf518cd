"""The embedded database's backup (docs/deployment.md, "Backups and restore"): `sqlite3
payorch.db ".backup copy.db"` taken while `payorch serve` runs is a whole database, but the
secrets in it are encrypted with the key file beside the original (payorch.db.key). Without
that file, payorch refuses to start on the copy with one line; with it copied beside the copy
(copy.db.key), the payments, the activity log and every stored secret are there."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from payorch.client import PayorchClient
from tests.backups import paid, verified_heads
from tests.live import create_sandbox, free_port, live_server, payorch_env, run_cli

pytestmark = pytest.mark.slow


def _embedded(path: Path) -> dict[str, str]:
    """The environment of an embedded database at ``path`` with its own key file."""
    env = payorch_env(f"sqlite:///{path}")
    env.pop("PAYORCH_SECRET_KEY")  # the embedded default: the key file beside the database
    return env


def test_an_online_sqlite_backup_restores_with_its_key_file(tmp_path: Path) -> None:
    original, copy = tmp_path / "payorch.db", tmp_path / "restored" / "payorch.db"
    copy.parent.mkdir()
    env = _embedded(original)
    assert run_cli(["migrate"], env).returncode == 0
    assert Path(f"{original}.key").exists()
    app = create_sandbox(env)
    with live_server(env, "--no-worker") as base, PayorchClient(app["api_key"], base) as client:
        endpoint = client.create_webhook_endpoint(url="https://hooks.example/payorch")
        assert endpoint.secret is not None
        intent_id = paid(client, app["merchant_account_id"], 1)
        # The online backup, while the service runs (SQLite's backup API, as `.backup` is).
        backup = subprocess.run(  # noqa: S603, S607 - SQLite's own shell, fixed arguments
            ["sqlite3", str(original), f".backup '{copy}'"], capture_output=True, text=True, timeout=60
        )
        assert backup.returncode == 0, backup.stderr
    heads = verified_heads(env)

    # Without the key file: a start makes a new key, which decrypts nothing stored: refused.
    restored = _embedded(copy)
    refused = run_cli(["serve", "--port", str(free_port())], restored)
    assert refused.returncode == 2, refused
    assert "PAYORCH_SECRET_KEY: no key of it decrypts the stored secrets" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr

    # With the original key file in place of the new one: everything is there.
    shutil.copyfile(f"{original}.key", f"{copy}.key")
    assert verified_heads(restored) == heads
    checked = run_cli(["secret-key", "reencrypt"], restored)
    assert checked.returncode == 0 and "re-encrypted" not in checked.stdout, checked
    shown = run_cli(["payments", "show", intent_id, "--json"], restored)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "AUTHORIZED"
