"""How a command ends when something goes wrong: one line on stderr naming what to fix, not a
traceback (`payorch --debug COMMAND` re-raises for the traceback).

Exit status 2: a setting is wrong or the database it names cannot be reached or opened, or
is not there for a command that does not create one (only `serve` and `migrate` do);
1: the request was refused as the API would refuse it. A reader that stops early (`| head`)
ends the command quietly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from payorch.config import SettingsError
from payorch.db.existing import missing_database
from payorch.errors import ApiError, DatabaseUnavailable
from payorch.invocation import invoked_as


def run_guarded(run: Callable[[], int], database_url: Callable[[], str], *, debug: bool) -> int:
    """``run`` the command; ``database_url`` is read only to name it in a connection error."""
    try:
        status = run()
        sys.stdout.flush()  # here, not at exit: a closed pipe is then caught below
        return status
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that flush is silent.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except SettingsError as exc:
        return _say(exc, str(exc), 2, debug)
    except DatabaseUnavailable as exc:
        return _say(exc, _unreachable(database_url(), exc.__cause__ or exc), 2, debug)
    except (DBAPIError, OSError) as exc:
        return _say(exc, _unreachable(database_url(), exc), 2, debug)
    except ApiError as exc:  # refused as the API would refuse it
        return _say(exc, exc.message, 1, debug)


def refuse_a_new_database(url: str) -> None:
    """Raise SettingsError when ``url`` names an embedded database that is not there yet."""
    path = missing_database(url)
    if path is not None:
        raise SettingsError(
            f"no database at {path.absolute()} (PAYORCH_DATABASE_URL={url}): create it with"
            f" `{invoked_as()} migrate`, or set PAYORCH_DATABASE_URL to the database you mean"
        )


def _say(exc: Exception, line: str, status: int, debug: bool) -> int:
    if debug:
        raise exc
    print(f"payorch: {line}", file=sys.stderr)
    return status


def _unreachable(url: str, exc: BaseException) -> str:
    """The setting, its value without a password, and the driver's own first line."""
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        shown = "(not a database URL)"
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    first = reason[0] if reason else type(exc).__name__
    return (
        f"cannot open the database of PAYORCH_DATABASE_URL={shown}: {first}"
        " (check the setting and that the database server is running; --debug for details)"
    )
