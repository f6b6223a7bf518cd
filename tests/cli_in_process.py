"""`payorch COMMAND` run inside the test process: `payorch.cli.main` with the arguments, in the
environment a new process would get, its stdout, stderr and exit status kept as
`subprocess.run` keeps them. A new process pays 1.4 s of imports per command (more under load);
this pays none. Each command family keeps one test that starts the real program (tests/live.py
``run_cli``), so the installed entry point stays covered.

The command runs on a thread of its own: it calls `asyncio.run`, which refuses to run on a
thread whose event loop is already running (an async test's). The test waits for it, as it would
wait for a process. While it runs, os.environ is the environment given, sys.argv what
`python -m payorch` would see (the hints a command prints name how it was started), sys.stdin
the input given and sys.stdout / sys.stderr two buffers. `serve` and a `worker` that starts stay
processes: they run until signalled, and set signal handlers, which only a main thread may."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

import payorch
from payorch.cli import main as payorch_main

# What sys.argv[0] is in `python -m payorch`: the package's __main__.py.
MAIN = str(Path(payorch.__file__).with_name("__main__.py"))
# One command at a time: the environment, argv and standard streams are the process's own.
_ONE_AT_A_TIME = threading.Lock()


def cli(
    args: list[str], env: Mapping[str, str], *, input: str = "", timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run ``payorch *args`` in this process with environment ``env`` and ``input`` on stdin (not
    a terminal, as under `subprocess.run`); ``timeout`` bounds the wait (a command still running
    then fails the test)."""
    out, err = io.StringIO(), io.StringIO()
    status: list[int] = []

    def command() -> None:
        try:
            status.append(_exit_status(args))
        except Exception:  # as the interpreter ends a program: the traceback, exit status 1
            traceback.print_exc()
            status.append(1)

    with _ONE_AT_A_TIME, _environment(env), _argv(args), _streams(input, out, err):
        thread = threading.Thread(target=command, name="payorch-cli", daemon=True)
        thread.start()
        thread.join(timeout)
    assert not thread.is_alive(), f"payorch {' '.join(args)} still running after {timeout:g} s"
    return subprocess.CompletedProcess(["payorch", *args], status[0], out.getvalue(), err.getvalue())


def _exit_status(args: list[str]) -> int:
    try:
        return payorch_main(args)
    except SystemExit as exc:  # argparse: --help, --version, a usage error
        code = exc.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def _argv(args: list[str]) -> Iterator[None]:
    before = sys.argv
    sys.argv = [MAIN, *args]
    try:
        yield
    finally:
        sys.argv = before


@contextlib.contextmanager
def _streams(input: str, out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    before = sys.stdin
    sys.stdin = io.StringIO(input)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        sys.stdin = before
