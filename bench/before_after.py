"""bench.compare's create and whole-payment figures for two source trees, in one run.

    git worktree add --detach /tmp/wt-before <commit>
    PYTHONPATH=src:. .venv/bin/python -m bench.before_after --before-src /tmp/wt-before/src

What a piece of work costs the hot paths (docs/performance-decisions.md, "Routing ... before and after"):
two `payorch serve --workers 2 --no-worker` servers, ``before`` from ``--before-src`` and
``after`` from ``--after-src`` (this tree by default), each on a fresh PostgreSQL database of its
own, started one at a time in alternating turns, measured with bench.variants' clients (wrk
creates at 64 connections; whole sandbox payments through ``auto`` by 16 buyers), with the server's
CPU time per create and per payment. At the end, each figure summed over the turns, after/before.
"""

from __future__ import annotations

import argparse
import os
import sys

from bench.kit import ROOT, load
from bench.variants import FIGURES, add_turn_arguments, measure_in_turns


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before-src", required=True, help="src/ of the tree before the work")
    parser.add_argument("--after-src", default=str(ROOT / "src"), help="src/ of the tree after it")
    add_turn_arguments(parser)
    args = parser.parse_args()
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    trees: dict[str, tuple[str, dict[str, str]]] = {
        "before": (args.before_src, {}),
        "after": (args.after_src, {}),
    }
    results = measure_in_turns(trees, args, "payorch_ba")
    for label in FIGURES:
        ratio = sum(results["after"][label]) / sum(results["before"][label])
        print(f"  {label}, after / before: {ratio:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
