"""Every benchmark under bench/ imports, so none of them rots between the runs docs/performance.md
documents (a renamed helper in src once broke three of them silently); and no module imports a
script (a module with a ``main``): the scripts share library modules only (bench/README.md)."""

import ast
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


# -- bench/ as one tool: a script imports library modules (bench/kit.py and the like), never
# another script. A script is a module with a top-level ``main`` or ``if __name__ == "__main__"``.


def _is_script(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "main":
            return True
        if (
            isinstance(node, ast.If)
            and "__main__" in ast.unparse(node.test)
            and "__name__" in ast.unparse(node.test)
        ):
            return True
    return False


def _bench_imports(tree: ast.Module) -> set[str]:
    """The bench modules a module imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("bench.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from . import x / from .x import y
                found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
            elif node.module == "bench":
                found |= {alias.name for alias in node.names}
            elif node.module and node.module.startswith("bench."):
                found.add(node.module.split(".")[1])
    return found


def script_imports(directory: Path) -> list[str]:
    """``"importer -> script"`` for each module of ``directory`` that imports one of its scripts."""
    trees = {p.stem: ast.parse(p.read_text(), str(p)) for p in directory.glob("*.py")}
    scripts = {name for name, tree in trees.items() if _is_script(tree)}
    return sorted(
        f"{name} -> {imported}"
        for name, tree in trees.items()
        for imported in _bench_imports(tree)
        if imported in scripts and imported != name
    )


def test_no_bench_module_imports_a_bench_script() -> None:
    assert script_imports(BENCH) == []


def test_library_modules_are_not_scripts() -> None:
    for name in ("kit", "payment_client", "seeding", "listing", "variants"):
        assert not _is_script(ast.parse((BENCH / f"{name}.py").read_text())), name


def test_the_detector_finds_a_planted_script_import(tmp_path: Path) -> None:
    (tmp_path / "kit.py").write_text('"""Library."""\n\nVALUE = 1\n')
    (tmp_path / "first.py").write_text(
        "from bench.kit import VALUE\n\n\ndef main() -> None:\n    print(VALUE)\n"
    )
    (tmp_path / "second.py").write_text('import sys\n\nif __name__ == "__main__":\n    sys.exit(0)\n')
    (tmp_path / "third.py").write_text(
        "def helper() -> None:\n    from bench import second\n\n    print(second)\n"
    )
    assert script_imports(tmp_path) == ["third -> second"]
    (tmp_path / "fourth.py").write_text(
        "import bench.second\nfrom bench.first import main\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    assert script_imports(tmp_path) == ["fourth -> first", "fourth -> second", "third -> second"]
