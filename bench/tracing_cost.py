"""What OpenTelemetry tracing costs, in one run (docs/performance.md, "Tracing").

    git worktree add /tmp/wt-notrace <commit before the tracing code>
    PYTHONPATH=src:. .venv/bin/python -m bench.tracing_cost --baseline-src /tmp/wt-notrace/src

Four `payorch serve --workers 2 --no-worker` servers, each on a fresh PostgreSQL database of its
own, started one at a time, in turns, and measured with bench.compare's clients (wrk creates, 64
connections; whole sandbox payments through `auto`, 16 buyers):

- ``no tracing code``: the source tree of ``--baseline-src``;
- ``tracing off``: this tree (or ``--traced-src``) with no OTEL_ variable;
- ``tracing 1.0`` and ``tracing 0.1``: that tree exporting to a local OTLP/HTTP sink (a process
  that reads each export and answers 200) with ``parentbased_traceidratio`` at that ratio.

Each figure is printed with the load average before it, and the server's CPU time per create and
per payment (its processes' user + system time over the run: less sensitive to a loaded machine
than a rate); at the end each figure summed over the turns, against ``no tracing code``.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import ExitStack

from bench.kit import ROOT, load
from bench.variants import FIGURES, add_turn_arguments, measure_in_turns, otlp_sink, tracing_variants


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-src", required=True, help="src/ of the tree without tracing")
    parser.add_argument("--traced-src", default=str(ROOT / "src"), help="src/ of the tree with it")
    add_turn_arguments(parser)
    args = parser.parse_args()
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    with ExitStack() as stack:
        sink = stack.enter_context(otlp_sink())
        variants = tracing_variants(args.baseline_src, args.traced_src, sink)
        names = list(variants)
        results = measure_in_turns(variants, args, "payorch_trace")
        # Summed over the turns, against the tree without tracing.
        for label in FIGURES:
            base = sum(results["no tracing code"][label])
            print(
                f"  {label}, / no tracing code: "
                + " ".join(f"{name}={sum(results[name][label]) / base:.3f}" for name in names),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
