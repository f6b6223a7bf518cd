# Two commands on a fresh machine: `make run` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test test-fast lint typecheck bench clean

# src/payorch/__init__.py: it holds the version, which the editable install's metadata copies.
$(STAMP): pyproject.toml src/payorch/__init__.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/payorch serve

# pytest-xdist: one worker per core; each worker has its own databases (tests/databases.py), and
# loadfile keeps a module's tests (and its module-scoped servers and database) on one worker.
PYTEST_WORKERS ?= auto

test: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

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
