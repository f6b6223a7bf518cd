"""The shape of src/payorch, read from the source with ``ast`` (nothing is imported):

- no import cycle between its modules (every ``import``, including those inside functions and
  ``TYPE_CHECKING`` blocks, counts);
- the transaction rule of docs/architecture.md: only the database package, the request
  dependencies, the command line, the bootstrap, the composition root and the worker runner open
  a connection or build a Database; everything else receives a connection or ``Phases``;
- one registration per provider (docs/providers.md): a provider is named only in its packages,
  its migration and the registries' lines (the last test imports the registries, to check that
  the names searched are theirs);
- one list of providers: no test, benchmark or example lists two providers or more by hand (a
  list, tuple or set literal); they take the registry's, or check their table against it.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "payorch"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> set[str]:
    """The modules of the package that ``module`` imports, anywhere in its text."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module.
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            names = subs if len(subs) == len(node.names) else [base, *subs]
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    return targets


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_package_has_no_import_cycle() -> None:
    graph = {module: _imported(module, path) for module, path in MODULES.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(f"  {len(c)} modules: {', '.join(c)}" for c in cycles)


def test_the_cycle_finder_names_a_cycle() -> None:
    # The check above must be able to fail: a two-module loop is reported with both names.
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


# Who may open a connection or build a Database (docs/architecture.md, "Transactions").
MAY_OPEN = (
    "payorch.db",
    "payorch.http.deps",
    "payorch.cli",
    "payorch.bootstrap",
    "payorch.composition",
    "payorch.worker.runner",
)


def _may_open(module: str) -> bool:
    return any(module == allowed or module.startswith(allowed + ".") for allowed in MAY_OPEN)


def _openings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Calls that open a connection: ``<database>.transaction()/.reading()``,
    ``<engine>.connect()/.begin()`` and ``Database(...)``, recognised by the receiver's name."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "Database":
            yield node.lineno, "Database(...)"
        elif isinstance(func, ast.Attribute):
            receiver = ast.unparse(func.value)
            last = receiver.rpartition(".")[2].lstrip("_")
            if func.attr in ("transaction", "reading") and last in ("database", "db"):
                yield node.lineno, f"{receiver}.{func.attr}()"
            elif func.attr in ("connect", "begin") and last == "engine":
                yield node.lineno, f"{receiver}.{func.attr}()"


def _violations() -> list[str]:
    found = []
    for module, path in MODULES.items():
        if _may_open(module):
            continue
        for line, call in _openings(ast.parse(path.read_text(), str(path))):
            found.append(f"{path.relative_to(SRC)}:{line}: {call}")
    return found


def test_the_opening_finder_sees_each_form() -> None:
    source = (
        "async def f(runtime, database, engine, phases):\n"
        "    async with runtime.database.transaction() as c: ...\n"
        "    async with self._database.reading() as c: ...\n"
        "    async with database.engine.connect() as c: ...\n"
        "    async with engine.begin() as c: ...\n"
        "    Database('sqlite://')\n"
        "    async with phases.transaction() as c: ...\n"  # allowed: a phase of the flow
    )
    assert sorted(line for line, _ in _openings(ast.parse(source))) == [2, 3, 4, 5, 6]


def test_only_the_edges_open_connections() -> None:
    violations = _violations()
    assert not violations, "opens a connection outside the edges:\n" + "\n".join(f"  {v}" for v in violations)


# One registration per provider (docs/providers.md): a provider's id, the constant that holds it
# and the simulator's name for it (its packages' name) appear only in its own packages, its
# migration, the registries' lines, docs and tests. Everything else reads the registries.
REPO = SRC.parent
REGISTRIES = ("payorch/providers/registry.py", "payorch/simulator/registry.py")
REGISTRY_LISTS = ("REGISTRATIONS", "SIMULATED")
SCANNED = (".py", ".html", ".js", ".css", ".ini", ".mako", ".json", ".txt")


def _provider_names(src: Path) -> dict[str, tuple[str, ...]]:
    """Per provider package (``providers/<name>/__init__.py`` with ``PROVIDER_X = "<id>"``): its
    name (also the simulator's name for it), its constant and its id."""
    names: dict[str, tuple[str, ...]] = {}
    for init in sorted((src / "payorch" / "providers").glob("*/__init__.py")):
        for node in ast.parse(init.read_text(), str(init)).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("PROVIDER_")
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                names[init.parent.name] = (init.parent.name, node.targets[0].id, node.value.value)
    return names


def _registry_lines(path: Path) -> set[int]:
    """The lines of a registry that may name providers: its imports and its list."""
    lines: set[int] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        listed = isinstance(node, ast.AnnAssign | ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in REGISTRY_LISTS
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        if isinstance(node, ast.ImportFrom) or listed:
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _provider_mentions(src: Path, examples: Path) -> list[str]:
    names = _provider_names(src)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for ns in names.values() for n in ns) + r")\b")
    owner = {name: package for package, ns in names.items() for name in ns}
    files = [p for root in (src / "payorch", examples) for p in sorted(root.rglob("*"))]
    found: list[str] = []
    for path in files:
        if path.suffix not in SCANNED or "__pycache__" in path.parts or not path.is_file():
            continue
        relative = path.relative_to(src) if path.is_relative_to(src) else path.relative_to(examples.parent)
        where = relative.as_posix()
        if where.startswith("payorch/db/migrations/"):
            continue  # each provider's migration (history: never rewritten)
        allowed = _registry_lines(path) if where in REGISTRIES else set()
        for number, line in enumerate([where, *path.read_text().splitlines()]):
            for match in pattern.finditer(line):
                package = owner[match.group(1)]
                own = (f"payorch/providers/{package}/", f"payorch/simulator/{package}/")
                if where.startswith(own) or number in allowed:
                    continue
                found.append(f"{where}:{number or 'path'}: {match.group(1)}")
    return found


def test_a_provider_is_named_only_by_its_packages_and_the_registries() -> None:
    mentions = _provider_mentions(SRC, REPO / "examples")
    assert not mentions, "a provider named outside its packages (register it instead):\n" + "\n".join(
        f"  {m}" for m in mentions
    )


def test_the_provider_names_searched_are_the_registered_ones() -> None:
    # The search above reads the names from the packages' text: they must be the registries'.
    from payorch.providers.registry import REGISTRATIONS
    from payorch.simulator.registry import SIMULATED

    names = _provider_names(SRC)
    # Every registered provider is found (a package still being written may not be registered yet).
    assert {r.simulator_name for r in REGISTRATIONS} <= set(names)
    for registration in REGISTRATIONS:
        package, _, provider_id = names[registration.simulator_name]
        assert registration.provider_id == provider_id
        assert type(registration.adapter).__module__.startswith(f"payorch.providers.{package}.")
    assert [s.registration for s in SIMULATED] == list(REGISTRATIONS)
    for simulated in SIMULATED:
        own = f"payorch.simulator.{simulated.name}."
        endpoints = [getattr(route, "endpoint", None) for r in simulated.routers for route in r.routes]
        assert endpoints and all(e is not None and e.__module__.startswith(own) for e in endpoints)
        assert simulated.settle.__module__.startswith(own)


# One list of providers (docs/providers.md, "4. Its tests and docs"): outside a provider's own
# packages, tests, benchmarks and examples name a provider one at a time and take every list of
# providers from the registry (``PROVIDER_IDS``, ``REGISTRATIONS``), or check a per-provider
# table against it (``tests.kit.each_provider_has_cases``, ``tests.kit.chosen_providers``). A
# list, tuple or set literal that names two providers or more is a list written by hand: a
# provider added later is silently left out of it; so is a dict keyed by two providers or more (a
# table written per provider) in a module that never checks a table (calls neither kit check nor
# reads the registry), unless it is a value compared with (an expected answer). Comments may name
# any; a dict's values are data (a routing rule's priority, a request body), and
# ``A, B = PROVIDER_A, PROVIDER_B`` only binds names. A name counts as a provider's when the module binds it (or imports it) to an id,
# a simulator name, a provider package's ``PROVIDER_X``, ``REGISTRATION`` or ``SIMULATED``.
LISTED_IN = ("tests", "bench", "examples")
TABLE_CHECKS = {"each_provider_has_cases", "chosen_providers", "REGISTRATIONS", "PROVIDER_IDS"}
PROVIDER_OBJECTS = {"REGISTRATION", "SIMULATED", "DRIVER"}


def _provider_bindings(
    trees: dict[str, ast.Module], names: dict[str, tuple[str, ...]]
) -> dict[str, dict[str, str]]:
    """Per module: its module-level names bound to a provider (-> the provider's package)."""
    values = {value: package for package, ns in names.items() for value in (ns[0], ns[2])}
    bound: dict[str, dict[str, str]] = {module: {} for module in trees}

    changed = True
    while changed:  # until names imported from other test modules are resolved too
        changed = False
        for module, tree in trees.items():
            found: dict[str, str] = {}
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    parts = node.module.split(".")
                    for alias in node.names:
                        local = alias.asname or alias.name
                        own = parts[:2] in (["payorch", "providers"], ["payorch", "simulator"])
                        if own and len(parts) > 2 and parts[2] in names:
                            if alias.name in PROVIDER_OBJECTS or alias.name.startswith("PROVIDER_"):
                                found[local] = parts[2]
                        elif alias.name in bound.get(node.module, {}):
                            found[local] = bound[node.module][alias.name]
                elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target, value = node.targets[0], node.value
                    pairs = [(target, value)]
                    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                        pairs = list(zip(target.elts, value.elts, strict=False))
                    for t, v in pairs:
                        provider = _provider_of(v, values, bound[module])
                        if isinstance(t, ast.Name) and provider:
                            found[t.id] = provider
            for name, provider in found.items():
                if bound[module].get(name) != provider:
                    bound[module][name] = provider
                    changed = True
    return bound


def _provider_of(node: ast.expr, values: dict[str, str], bound: dict[str, str]) -> str | None:
    """The provider package an element names: as a string, or by a name bound to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return values.get(node.value)
    return bound.get(node.id) if isinstance(node, ast.Name) else None


def _provider_lists(repo: Path, names: dict[str, tuple[str, ...]]) -> list[str]:
    """``path:line: literal`` of each literal sequence naming two providers or more."""
    paths = {}
    for root in LISTED_IN:
        for path in sorted((repo / root).rglob("*.py")):
            module = ".".join(path.relative_to(repo).with_suffix("").parts).removesuffix(".__init__")
            paths[module] = path
    trees = {module: ast.parse(path.read_text(), str(path)) for module, path in paths.items()}
    bound = _provider_bindings(trees, names)
    values = {value: package for package, ns in names.items() for value in (ns[0], ns[2])}
    found = []
    for module, tree in trees.items():
        data: set[int] = set()  # dict values, and the right side of ``A, B = ...``
        compared: set[int] = set()  # the operands of a comparison
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                data.update(id(value) for value in node.values)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Tuple) for t in node.targets):
                data.add(id(node.value))
            elif isinstance(node, ast.Compare):
                compared.update(id(operand) for operand in (node.left, *node.comparators))
        checks_tables = any(isinstance(n, ast.Name) and n.id in TABLE_CHECKS for n in ast.walk(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict) and not checks_tables and id(node) not in data | compared:
                elements: list[ast.expr] = [key for key in node.keys if key is not None]
            elif isinstance(node, ast.List | ast.Tuple | ast.Set) and id(node) not in data:
                elements = node.elts
            else:
                continue
            if isinstance(getattr(node, "ctx", None), ast.Store):
                continue
            providers = {_provider_of(e, values, bound[module]) for e in elements} - {None}
            if len(providers) >= 2:
                where = paths[module].relative_to(repo).as_posix()
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)[:60]}")
    return found


def test_no_test_lists_the_providers_by_hand() -> None:
    listed = _provider_lists(REPO, _provider_names(SRC))
    assert not listed, (
        "providers listed by hand (take them from payorch.providers.registry, or check the table "
        "with tests.kit.each_provider_has_cases / chosen_providers):\n" + "\n".join(f"  {m}" for m in listed)
    )


def test_the_provider_list_finder_sees_each_form(tmp_path: Path) -> None:
    names = _provider_names(SRC)
    [(package, constant, provider_id), *_] = names.values()
    [(other, other_constant, other_id), *_] = [ns for ns in names.values() if ns[0] != package]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_text(f'X = "{provider_id}"\n')
    (tmp_path / "tests" / "test_listed.py").write_text(
        f"from payorch.providers.{other} import {other_constant}\n"
        "from tests.helpers import X\n"
        f"X2, Y = X, {other_constant}  # {provider_id}, {other_id}: comments may name them\n"
        "RULE = {'priority': [X, Y]}\n"  # data: allowed
        "EVERY = [X, Y]\n"  # 2: a module's list of names bound by import and by assignment
        f"for p in ('{package}', '{other_id}'):\n"  # 6: a name and an id, as strings
        "    pass\n"
        "ONE = (X, X2)\n"  # one provider twice: not a list of providers
        "RATES = {X: 0.5, Y: 0.9}\n"  # 9: a table written per provider, never checked
        "assert {X: 1, Y: 2} == dict(RATES)\n"  # an expected answer: allowed
    )
    (tmp_path / "tests" / "test_checked.py").write_text(
        "from tests.helpers import X\nfrom tests.kit import each_provider_has_cases\n"
        f"RATES = {{X: 0.5, '{other_id}': 0.9}}\n"  # checked below: allowed
        "each_provider_has_cases(set(RATES), 'RATES')\n"
    )
    found = _provider_lists(tmp_path, names)
    assert [line.split(": ")[0] for line in found] == [
        "tests/test_listed.py:5",
        "tests/test_listed.py:6",
        "tests/test_listed.py:9",
    ]
