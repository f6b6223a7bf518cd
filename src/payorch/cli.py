"""The operator's command line: serve, worker, migrate, applications, keys, users, connectors,
payments, webhooks, activity and secret-key. Every --help shows the defaults and the settings
that apply."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from payorch import __version__
from payorch.activity_cli import add_activity_commands
from payorch.admin_cli import DATABASE_SETTINGS, HelpFormatter, add_commands, command
from payorch.cli_guard import refuse_a_new_database, run_guarded
from payorch.config import Settings, load_settings
from payorch.links_cli import add_links_commands
from payorch.operator_cli import add_operator_commands
from payorch.secret_key_cli import add_secret_key_commands, refuse_a_wrong_key
from payorch.users_cli import add_users_commands

SERVE_SETTINGS = (
    DATABASE_SETTINGS
    + """
  PAYORCH_PUBLIC_URL    the URL buyers' browsers and providers reach the service at
                        (unset: serve's own http://HOST:PORT)
  PAYORCH_REDIS_URL     shared rate limits and provider health across API processes
  and every other PAYORCH_ setting of docs/deployment.md (limits, timeouts, webhooks)"""
)
WORKER_SETTINGS = (
    DATABASE_SETTINGS
    + """
  PAYORCH_WEBHOOK_*     delivery timeout, retry schedule and in-flight caps
  PAYORCH_WORKER_METRICS_PORT  serve the worker's /metrics on this port
  PAYORCH_METRICS_HOST  the address it binds to (127.0.0.1 by default)
  and every other PAYORCH_ setting of docs/deployment.md"""
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)

    def run() -> int:
        settings = load_settings()
        if not args.creates_database:
            refuse_a_new_database(settings.database_url)  # one run elsewhere: no stray ./payorch.db
        return int(args.handler(settings, args) or 0)

    # Errors become one line (cli_guard.py): the URL is read again only to name it.
    default_url = str(Settings.model_fields["database_url"].default)
    return run_guarded(run, lambda: os.environ.get("PAYORCH_DATABASE_URL", default_url), debug=args.debug)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="payorch", description=__doc__, formatter_class=HelpFormatter, epilog=SERVE_SETTINGS
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser.add_argument("--version", action="version", version=f"payorch {__version__}")
    # Only serve and migrate make a database that is not there yet (a command run elsewhere
    # must not leave a stray ./payorch.db; `applications create` migrates only one that exists).
    parser.set_defaults(creates_database=False)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = command(commands, "serve", "migrate, then serve the API (and run the worker)", SERVE_SETTINGS)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--workers", type=int, default=1, help="API processes")
    serve.add_argument("--no-worker", action="store_true", help="do not run the background worker")
    serve.set_defaults(handler=_serve, creates_database=True)

    worker = command(commands, "worker", "run background work only", WORKER_SETTINGS)
    # Set by serve for its own worker child: stop when that process dies (worker/parent.py).
    worker.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    worker.set_defaults(handler=_worker)

    migrate = command(commands, "migrate", "apply database migrations")
    migrate.set_defaults(handler=_migrate, creates_database=True)

    applications = command(commands, "applications", "manage applications")
    app_commands = applications.add_subparsers(required=True, metavar="ACTION")
    create = command(app_commands, "create", "migrate, then create an application, merchant and API key")
    create.add_argument(
        "--name", help="the application's name (required)", required=True, default=argparse.SUPPRESS
    )
    create.add_argument(
        "--environment",
        choices=["SANDBOX", "PRODUCTION"],
        help="(required)",
        required=True,
        default=argparse.SUPPRESS,
    )
    create.add_argument("--merchant-name", help="its merchant account's name (unset: --name)")
    create.add_argument("--mock-connectors", action="store_true", help="SANDBOX only")
    create.add_argument(
        "--owner-email", metavar="EMAIL", help="invite this person as the owner; prints their invite URL"
    )
    create.add_argument("--json", action="store_true", help="print one JSON object")
    create.set_defaults(handler=_applications_create)
    add_commands(commands, app_commands)
    add_operator_commands(commands)
    add_activity_commands(commands)
    add_users_commands(commands)
    add_secret_key_commands(commands)
    add_links_commands(commands)
    return parser


def _migrate(settings: Settings, _args: argparse.Namespace) -> int:
    from payorch.crypto import load_cipher
    from payorch.db.migrate import migrate, migration_report

    load_cipher(settings)  # fail early on a missing PAYORCH_SECRET_KEY
    done = migrate(settings.database_url, transaction_pooling=settings.database_transaction_pooling)
    print(f"payorch: {migration_report(done)}", file=sys.stderr)
    return 0


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from payorch import serve_address
    from payorch.bootstrap import bootstrap_sandbox
    from payorch.http import server_protocol

    if not _package_files_load() or not _tracing_configured_well():
        return 1
    # Before anything is created or printed: a port in use is one line, not "serving at".
    refusal = serve_address.cannot_listen(args.host, args.port)
    if refusal is not None:
        print(f"payorch: {refusal}", file=sys.stderr)
        return 2
    if "public_url" not in settings.model_fields_set:
        # The URLs handed out (checkouts, simulator pages, returns) follow --host and --port;
        # the API processes and the worker child read it from the environment.
        os.environ["PAYORCH_PUBLIC_URL"] = serve_address.local_url(args.host, args.port)
        settings = load_settings()
    _migrate(settings, args)
    refuse_a_wrong_key(settings)  # a restored database started with another key: one line
    # Before uvicorn (and its --workers processes, which inherit it): the default connection
    # cap is derived from this limit (http/server_protocol.py).
    server_protocol.raise_fd_limit()
    asyncio.run(bootstrap_sandbox(settings))
    # On every start (make run included): where a person signs in.
    print(f"payorch: dashboard at {settings.public_url}/dashboard", flush=True)
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


def _package_files_load() -> bool:
    """Load the app's modules, which read the package's own files (the dashboard's script and
    styles) as they load: an install missing one stops here, before a first start creates the
    database and its key file and prints a sandbox key for a service that never starts."""
    try:
        importlib.import_module("payorch.composition")
    except FileNotFoundError as exc:
        print(f"payorch: the installed package lacks {exc.filename}; reinstall payorch", file=sys.stderr)
        return False
    return True


def _tracing_configured_well() -> bool:
    """The OTEL_ variables, checked before a start (observability/tracing.py)."""
    from payorch.observability.tracing import configuration_error

    error = configuration_error()
    if error is not None:
        print(f"payorch: {error}", file=sys.stderr)
        return False
    return True


def _exit_cleanly(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def _worker(settings: Settings, args: argparse.Namespace) -> int:
    from payorch.worker.parent import signal_on_parent_death

    if args.parent_pid is not None:
        signal_on_parent_death()  # first: the imports below take a while
    if not _package_files_load():
        return 1

    from payorch.composition import build_runtime
    from payorch.logs import configure_logging
    from payorch.observability import tracing
    from payorch.observability.exporter import start_worker_exporter
    from payorch.worker.runner import run_until_signalled

    if args.parent_pid is None:  # serve checked it before starting its own worker
        refuse_a_wrong_key(settings)
    configure_logging()
    if not _tracing_configured_well():
        return 1
    tracing.configure()
    if settings.worker_metrics_port is not None:
        # Validated by Settings (a bad value already stopped the start); the exporter reads
        # the same variable. Started before any work so a port in use fails the start.
        try:
            start_worker_exporter(settings.metrics_host)
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
    if args.owner_email is not None:  # refused before anything is migrated or created
        from payorch.users.service import normalized_email

        normalized_email(args.owner_email, field="--owner-email")
    _migrate(settings, args)  # an existing database (or a new PostgreSQL one) gets its tables first
    new = asyncio.run(
        create_application(
            settings,
            name=args.name,
            environment=args.environment,
            merchant_name=args.merchant_name,
            mock_connectors=args.mock_connectors,
            owner_email=args.owner_email,
        )
    )
    created = new.created
    out = {
        "application_id": created.application_id,
        "merchant_account_id": created.merchant_account_id,
        "environment": created.environment,
        "api_key": created.api_key,
    }
    if new.owner_invite_url is not None:
        out["owner_invite_url"] = new.owner_invite_url
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key}: {value}")
        print("The API key is shown only now; keep it.")
        if new.owner_invite_url is not None:
            print("The owner's invite URL too: it works once, for 72 hours.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
