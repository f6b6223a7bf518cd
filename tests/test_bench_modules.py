"""Every benchmark under bench/ imports, so none of them rots between the runs docs/performance.md
documents (a renamed helper in src once broke three of them silently)."""

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
MODULES = sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "__init__")


def test_the_bench_directory_is_found() -> None:
    assert len(MODULES) > 10


@pytest.mark.parametrize("module", MODULES)
def test_a_benchmark_imports(module: str) -> None:
    imported = importlib.import_module(f"bench.{module}")
    assert imported.__file__ is not None
