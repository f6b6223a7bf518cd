"""bench.compare's create and whole-payment figures for two source trees, in one run.

    git worktree add --detach /tmp/wt-before <commit>
    PYTHONPATH=src:. .venv/bin/python -m bench.before_after --before-src /tmp/wt-before/src

What a piece of work costs the hot paths (docs/performance.md, "Routing ... before and after"):
two `payorch serve --workers 2 --no-worker` servers, ``before`` from ``--before-src`` and
``after`` from ``--after-src`` (this tree by default), each on a fresh PostgreSQL database of its
own, started one at a time in alternating turns, measured with bench.tracing_cost's clients (wrk
creates at 64 connections; whole sandbox payments through ``auto`` by 16 buyers), with the server's
CPU time per create and per payment. At the end, each figure summed over the turns, after/before.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from contextlib import ExitStack

from bench.compare import ADMIN_URL, fresh_database, load
from bench.sandbox_payment import ROOT, sandbox_application
from bench.tracing_cost import FIGURES, measure_creates, measure_payments, server


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before-src", required=True, help="src/ of the tree before the work")
    parser.add_argument("--after-src", default=str(ROOT / "src"), help="src/ of the tree after it")
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--seconds", type=int, default=10, help="per create run")
    parser.add_argument("--rounds", type=int, default=2, help="turns of each measure")
    parser.add_argument("--payments", type=int, default=200, help="per payment run")
    parser.add_argument("--buyers", type=int, default=16)
    args = parser.parse_args()
    tag = uuid.uuid4().hex[:8]
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    trees = {"before": args.before_src, "after": args.after_src}
    results: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    with ExitStack() as stack:
        databases = {
            name: stack.enter_context(fresh_database(args.admin_url, f"payorch_ba_{tag}_{name}"))
            for name in trees
        }
        applications: dict[str, tuple[str, str]] = {}
        names = list(trees)
        for turn in range(args.rounds):
            # Every other turn in the opposite order, so a drift of the machine's load favours neither.
            for name in names if turn % 2 == 0 else names[::-1]:
                with server(databases[name], trees[name], {}) as (url, env, process):
                    if name not in applications:
                        applications[name] = sandbox_application(env)
                    key, merchant = applications[name]
                    figures = (
                        *measure_creates(name, url, key, merchant, args.seconds, process.pid),
                        *measure_payments(name, url, key, merchant, args, process.pid),
                    )
                for label, value in zip(FIGURES, figures, strict=True):
                    results[name].setdefault(label, []).append(value)
    for label in FIGURES:
        ratio = sum(results["after"][label]) / sum(results["before"][label])
        print(f"  {label}, after / before: {ratio:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
