"""Seed a PostgreSQL database with authorized payments for the listing benchmark.

    PYTHONPATH=src:. python -m bench.seed_payments \
        --database-url postgresql://postgres@127.0.0.1:5432/DB --payments 10000 \
        [--application-id app_...]

Creates (or reuses) one application and adds N payments with their intents, spread over the
past year with time-ordered ids, using COPY (asyncpg ``copy_records_to_table``) in batches.
Prints one JSON line: {"application_id", "api_key" (new applications only), "payments"}.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from bench.seeding import seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--payments", type=int, required=True)
    parser.add_argument("--application-id")
    args = parser.parse_args()
    url = args.database_url.replace("postgresql+asyncpg://", "postgresql://")
    print(json.dumps(asyncio.run(seed(url, args.payments, args.application_id))))


if __name__ == "__main__":
    main()
