"""Benchmark: the whole sandbox payment, in payments per second, against a live server.

One payment = create intent -> request checkout -> open the simulator page and press "approve"
(as a browser: form POST for provider A, redirect for B and C) -> the buyer's return (the service
confirms with the provider, authorizes, 303) -> read the intent (must be AUTHORIZED).

    # start a server itself (SQLite file in a temp dir, or --database-url), then measure:
    python bench/sandbox_payment.py --count 200 --concurrency 8
    # or against a running server with an application made by
    # `payorch applications create --environment SANDBOX --mock-connectors --json`:
    python bench/sandbox_payment.py --url http://127.0.0.1:8000 \
        --api-key pay_sb_... --merchant mrc_...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run by path: bench.kit importable

from bench.kit import sandbox_application, started_server  # noqa: E402
from bench.payment_client import PROVIDERS, run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running server; without it one is started")
    parser.add_argument("--api-key")
    parser.add_argument("--merchant")
    parser.add_argument("--database-url", help="for the started server (default: SQLite in a temp dir)")
    parser.add_argument("--workers", type=int, default=1, help="API processes of the started server")
    parser.add_argument("--provider", choices=sorted(PROVIDERS), default="a")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    provider = PROVIDERS[args.provider]
    if args.url:
        if not (args.api_key and args.merchant):
            parser.error("--url needs --api-key and --merchant")
        result = asyncio.run(
            run(args.url, args.api_key, args.merchant, provider, args.count, args.concurrency)
        )
    else:
        with tempfile.TemporaryDirectory() as tmp:
            database_url = args.database_url or f"sqlite:///{tmp}/bench.db"
            with started_server(database_url, args.workers) as (url, env, _):
                api_key, merchant = sandbox_application(env)
                result = asyncio.run(
                    run(
                        url,
                        api_key,
                        merchant,
                        provider,
                        args.count,
                        args.concurrency,
                    )
                )
    print(json.dumps({"provider": provider, "concurrency": args.concurrency, **result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
