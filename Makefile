# Two commands on a fresh machine: `make run` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test test-fast lint typecheck bench clean

# Every package comes from uv.lock (versions and hashes), so two installs a month apart are the
# same (README.md, Setup). uv itself is bootstrapped with the venv's own pip at a pinned version:
# a fresh machine needs nothing but Python. UV_PROJECT_ENVIRONMENT makes uv use this .venv.
UV_VERSION := 0.13.9
UV := UV_PROJECT_ENVIRONMENT=$(VENV) $(BIN)/uv

# --frozen: install what the lock says, never re-resolve (`make test` checks it is current).
# --inexact: keep the venv's pip and uv, which the lock does not list (tests build wheels with
# this pip). payorch itself is installed editable, from src/. src/payorch/__init__.py holds the
# version, which the editable install's metadata copies.
# --compile-bytecode: every installed module is compiled once, here. A machine whose environment
# sets PYTHONDONTWRITEBYTECODE (this one's does) otherwise compiles SQLAlchemy, FastAPI, Pydantic
# and the rest from source in every process: `import payorch.app` took 3.9 s of CPU, 1.9 s
# compiled, and the suite starts hundreds of processes (servers, the command line, workers).
$(STAMP): pyproject.toml uv.lock src/payorch/__init__.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q uv==$(UV_VERSION)
	$(UV) sync -q --frozen --inexact --extra dev --compile-bytecode
	touch $(STAMP)

# payorch's own modules (installed editable, from src/) are compiled as they are first imported:
# the recipes' processes may write their bytecode (__pycache__/ is ignored by git and the wheel).
unexport PYTHONDONTWRITEBYTECODE

run: $(STAMP)
	$(BIN)/payorch serve

# pytest-xdist: one worker per core; each worker has its own databases (tests/databases.py), and
# loadfile keeps a module's tests (and its module-scoped servers and database) on one worker.
PYTEST_WORKERS ?= auto

# --durations=40: every run ends with its 40 slowest set-ups, calls and tear-downs, so a run's
# log says where its time went (docs/performance.md, The test suite).
# First: a lock that no longer matches pyproject.toml fails the run (`uv lock` writes a new one).
test: $(STAMP)
	$(UV) lock --check
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=40 $(PYTEST_ARGS)

# The inner loop (README.md, Tests): SQLite only (`-k "not postgres"` drops the PostgreSQL
# parameter and the PostgreSQL-only tests), no test that starts a process or a browser (`slow`).
# Two workers per core: these tests mostly wait on simulated timeouts (175 s with 2, 133 s with 4).
FAST_WORKERS ?= 4
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(FAST_WORKERS) --dist loadfile -m "not slow" -k "not postgres" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests examples

typecheck: $(STAMP)
	$(BIN)/mypy

# payorch against the bare stack, side by side (docs/performance.md); needs wrk and PostgreSQL.
bench: $(STAMP)
	PYTHONPATH=src:. $(BIN)/python -m bench.compare $(BENCH_ARGS)

clean:
	rm -rf $(VENV) payorch.db payorch.db-* payorch.db.key
