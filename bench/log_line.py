"""Cost of one request log line: a typical ``payorch.requests`` record (method, route, status,
duration_ms, application_id, request_id) through our JSON handler.

    PYTHONPATH=src:. python -m bench.log_line [--lines 200000] [--repeat 7]

Prints microseconds per line, the best of ``--repeat`` timeit runs, for: ``format`` (the
JsonFormatter alone), ``handle`` (the handler's filters, the formatter and the write, here to a
stream that discards it) and ``logger.info`` (what a request pays: the record made by the
logging module, as ``payorch.http.context`` logs it, then ``handle``). ``handle, secret`` is
the record with an API key in its message: the path where redaction has something to mask.
"""

from __future__ import annotations

import argparse
import io
import logging
import timeit
from collections.abc import Callable

from payorch.http.context import request_id_var
from payorch.logs import JsonFormatter, build_handler

API_KEY = "pay_sb_0123456789ab_" + "c" * 48


class Discard(io.StringIO):
    """A text stream that drops what it is given (the cost of a real write is not ours)."""

    def write(self, text: str) -> int:
        return len(text)


EXTRA: dict[str, object] = {
    "method": "POST",
    "route": "/v1/payment-intents",
    "status": 201,
    "duration_ms": 12.3,
    "application_id": "app_01JD8ZK3QF6V2M4N5P7R9S0T1U",
}


def request_record(message_args: tuple[object, ...]) -> logging.LogRecord:
    logger = logging.getLogger("payorch.requests")
    return logger.makeRecord(
        logger.name, logging.INFO, __file__, 1, "%s %s -> %s", message_args, None, extra=EXTRA
    )


def best_us(statement: Callable[[], object], lines: int, repeat: int) -> float:
    runs = timeit.repeat(statement, number=lines, repeat=repeat)
    return min(runs) / lines * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    request_id_var.set("req_01JD8ZK3QF6V2M4N5P7R9S0T1V")
    formatter = JsonFormatter()
    handler = build_handler(Discard())
    plain = request_record(("POST", "/v1/payment-intents", 201))
    secret = request_record(("POST", f"/v1/payment-intents {API_KEY}", 201))
    leaky = (secret.msg, secret.args)

    logger = logging.getLogger("bench.log_line")  # ours alone: not the root's handlers
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    def log() -> None:
        logger.info("%s %s -> %s", "POST", "/v1/payment-intents", 201, extra=EXTRA)

    def handle_secret() -> None:
        # A filter may mask the record in place: give it back its secret every time.
        secret.msg, secret.args = leaky
        handler.handle(secret)

    print("line:", formatter.format(plain))
    for label, run in (
        ("format", lambda: formatter.format(plain)),
        ("handle", lambda: handler.handle(plain)),
        ("logger.info", log),
        ("handle, secret", handle_secret),
    ):
        print(f"{label}: {best_us(run, args.lines, args.repeat):.2f} us per line")


if __name__ == "__main__":
    main()
