"""The operator's command line: serve, worker, migrate, applications create."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from payorch.config import Settings, SettingsError, load_settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
        return int(args.handler(settings, args) or 0)
    except SettingsError as exc:
        print(f"payorch: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="payorch", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="migrate, then serve the API (and run the worker)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="API processes")
    serve.add_argument("--no-worker", action="store_true", help="do not run the background worker")
    serve.set_defaults(handler=_serve)

    worker = commands.add_parser("worker", help="run background work only")
    # Set by serve for its own worker child: stop when that process dies (worker/parent.py).
    worker.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    worker.set_defaults(handler=_worker)

    migrate = commands.add_parser("migrate", help="apply database migrations")
    migrate.set_defaults(handler=_migrate)

    applications = commands.add_parser("applications", help="manage applications")
    app_commands = applications.add_subparsers(required=True, metavar="ACTION")
    create = app_commands.add_parser(
        "create", help="migrate, then create an application, merchant and API key"
    )
    create.add_argument("--name", required=True)
    create.add_argument("--environment", required=True, choices=["SANDBOX", "PRODUCTION"])
    create.add_argument("--merchant-name")
    create.add_argument("--mock-connectors", action="store_true", help="SANDBOX only")
    create.add_argument("--json", action="store_true", help="print one JSON object")
    create.set_defaults(handler=_applications_create)
    return parser


def _migrate(settings: Settings, _args: argparse.Namespace) -> int:
    from payorch.crypto import load_cipher
    from payorch.db.migrate import upgrade

    load_cipher(settings)  # fail early on a missing PAYORCH_SECRET_KEY
    upgrade(settings.database_url)
    print("payorch: database is at the newest migration", file=sys.stderr)
    return 0


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from payorch.bootstrap import bootstrap_sandbox
    from payorch.http import server_protocol

    _migrate(settings, args)
    # Before uvicorn (and its --workers processes, which inherit it): the default connection
    # cap is derived from this limit (http/server_protocol.py).
    server_protocol.raise_fd_limit()
    asyncio.run(bootstrap_sandbox(settings))
    # uvicorn restores the handler it found and re-raises SIGTERM after its shutdown; with the
    # default handler that kills us before the `finally` below can stop the worker child.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    worker = None
    if not args.no_worker:
        worker = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments and our pid
            [sys.executable, "-m", "payorch", "worker", "--parent-pid", str(os.getpid())],
            env=os.environ.copy(),
        )
    try:
        uvicorn.run(
            "payorch.composition:serve_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            access_log=False,
            log_config=None,
            proxy_headers=False,
            http=server_protocol.IMPORT_STRING,  # header/body deadlines, connection cap
            ws="none",  # no WebSocket routes: an Upgrade request is plain HTTP
        )
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
    return 0


def _exit_cleanly(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def _worker(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.worker.parent import signal_on_parent_death

    if args.parent_pid is not None:
        signal_on_parent_death()  # first: the imports below take a while

    from payorch.composition import build_runtime
    from payorch.logs import configure_logging
    from payorch.observability.exporter import start_worker_exporter
    from payorch.worker.runner import run_until_signalled

    configure_logging()
    if settings.worker_metrics_port is not None:
        # Validated by Settings (a bad value already stopped the start); the exporter reads
        # the same variable. Started before any work so a port in use fails the start.
        try:
            start_worker_exporter()
        except OSError as exc:
            print(
                f"payorch: PAYORCH_WORKER_METRICS_PORT: cannot serve metrics: {exc}",
                file=sys.stderr,
            )
            return 2

    async def main() -> None:
        await run_until_signalled(build_runtime(settings), parent_pid=args.parent_pid)

    asyncio.run(main())
    return 0


def _applications_create(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.bootstrap import create_application

    if args.mock_connectors and args.environment != "SANDBOX":
        print("payorch: --mock-connectors is for SANDBOX applications only", file=sys.stderr)
        return 2
    _migrate(settings, args)  # as serve does: a fresh database gets its tables first
    created = asyncio.run(
        create_application(
            settings,
            name=args.name,
            environment=args.environment,
            merchant_name=args.merchant_name,
            mock_connectors=args.mock_connectors,
        )
    )
    out = {
        "application_id": created.application_id,
        "merchant_account_id": created.merchant_account_id,
        "environment": created.environment,
        "api_key": created.api_key,
    }
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")
        print("The API key is shown only now; keep it.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
