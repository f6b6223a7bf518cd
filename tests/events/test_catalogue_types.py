"""A wrong event payload is a type error: mypy --strict (the project's configuration, with the
pydantic plugin's typed __init__) refuses an unknown field, a missing one and a value of the wrong
type in a catalogue model, and accepts the right one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ERROR = re.compile(r"emitter\.py:(\d+): error: .*\[([a-z-]+)\]$")

pytestmark = pytest.mark.slow  # starts mypy

EMITTER = """
from payorch.events.catalogue import PaymentAuthorized

PaymentAuthorized(payment_intent_id="payi_1", external_reference="o", metadata={}, payment_id="pay_1", provider="p", amount=1500, currency="CLP", capture_method="automatic")
PaymentAuthorized(payment_intent_id="payi_1", external_reference="o", metadata={}, payment_id="pay_1", provider="p", amount=1500, currency="CLP", capture_method="automatic", code="x")
PaymentAuthorized(payment_intent_id="payi_1", external_reference="o", metadata={}, payment_id="pay_1", provider="p", currency="CLP", capture_method="automatic")
PaymentAuthorized(payment_intent_id="payi_1", external_reference="o", metadata={}, payment_id="pay_1", provider="p", amount="1500", currency="CLP", capture_method="automatic")
"""


def test_mypy_refuses_a_wrong_unknown_or_missing_field(tmp_path: Path) -> None:
    emitter = tmp_path / "emitter.py"
    emitter.write_text(EMITTER)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(emitter)],
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},  # the source, as `make typecheck` reads it
        capture_output=True,
        text=True,
        timeout=300,
    )
    # By the file's name: mypy's cache may name the path of an earlier run's identical file.
    found = (ERROR.search(line) for line in done.stdout.splitlines())
    errors = {int(match[1]): match[2] for match in found if match is not None}
    # Line 4 is right; 5 has an unknown field, 6 misses amount, 7 gives amount as a string.
    assert errors == {5: "call-arg", 6: "call-arg", 7: "arg-type"}, done.stdout
