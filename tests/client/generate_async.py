"""Regenerate src/payorch/client/_async.py from _sync.py and _async_admin.py from _sync_admin.py
(run by hand after editing either sync file):

    python tests/client/generate_async.py && ruff format --line-length 100 src/payorch/client

test_async_client_is_generated_from_the_sync_one fails when the two drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "src" / "payorch" / "client"

SYNC_DOC = '''    """payorch's API from synchronous code.

    >>> client = PayorchClient("pay_sb_...", base_url="http://127.0.0.1:8000")
    >>> intent = client.create_payment_intent(merchant_account_id="mrc_...", ...)

    ``transport`` replaces the network (``httpx.MockTransport`` in tests); ``sleep`` replaces
    ``time.sleep`` between retries.
    """'''
ASYNC_DOC = '''    """payorch's API from asyncio code.

    >>> async with AsyncPayorchClient("pay_sb_...", base_url="http://127.0.0.1:8000") as client:
    ...     intent = await client.create_payment_intent(merchant_account_id="mrc_...", ...)

    ``transport`` replaces the network (``httpx.ASGITransport(app)`` or ``httpx.MockTransport``
    in tests); ``sleep`` replaces ``asyncio.sleep`` between retries.
    """'''
SYNC_CLOSE = """    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PayorchClient:
        return self

    def __exit__(self, *exc_info: object) -> None:"""
ASYNC_CLOSE = """    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncPayorchClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:"""


def generate(sync_source: str) -> str:
    s = sync_source
    replacements = [
        (
            '"""The synchronous client."""',
            '"""The asynchronous client, generated from _sync.py by tests/client/generate_async.py."""',
        ),
        (
            "import time\nfrom collections.abc import Callable, Iterator, Mapping",
            "import asyncio\nfrom collections.abc import AsyncIterator, Awaitable, Callable, Mapping",
        ),
        (
            "class PayorchClient(SyncAdministration, SyncLinks, SyncHolds):",
            "class AsyncPayorchClient(AsyncAdministration, AsyncLinks, AsyncHolds):",
        ),
        ("from payorch.client._holds import SyncHolds\n", "from payorch.client._holds import AsyncHolds\n"),
        ("from payorch.client._links import SyncLinks\n", "from payorch.client._links import AsyncLinks\n"),
        # Import order as isort wants it: _async_admin sorts before _core, _sync_admin after.
        ("from payorch.client._sync_admin import SyncAdministration, each_item\n", ""),
        (
            "from payorch.client import _operations as ops\n",
            "from payorch.client import _operations as ops\n"
            "from payorch.client._async_admin import AsyncAdministration, each_item\n",
        ),
        (SYNC_DOC, ASYNC_DOC),
        (
            "transport: httpx.BaseTransport | None = None,",
            "transport: httpx.AsyncBaseTransport | None = None,",
        ),
        (
            "sleep: Callable[[float], None] = time.sleep,",
            "sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,",
        ),
        ("self._http = httpx.Client(", "self._http = httpx.AsyncClient("),
        ('return f"PayorchClient(', 'return f"AsyncPayorchClient('),
        (SYNC_CLOSE, ASYNC_CLOSE),
        ("        self.close()\n", "        await self.aclose()\n"),
        ("response = self._http.request(", "response = await self._http.request("),
        ("self._sleep(delay)", "await self._sleep(delay)"),
        ("with self._http.stream(", "async with self._http.stream("),
        ("response.read()", "await response.aread()"),
        ("for text in response.iter_text():", "async for text in response.aiter_text():"),
    ]
    return _awaited(_replaced(s, replacements))


def generate_admin(sync_source: str) -> str:
    return _awaited(
        _replaced(
            sync_source,
            [
                ("of the synchronous client", "of the asynchronous client"),
                ("mixed into PayorchClient.", "mixed into AsyncPayorchClient (generated)."),
                (
                    "from collections.abc import Callable, Iterator",
                    "from collections.abc import AsyncIterator, Awaitable, Callable",
                ),
                (
                    "def each_item(page_at: Callable[[str | None], Page[ItemT]]) -> Iterator[ItemT]:",
                    "async def each_item(\n"
                    "    page_at: Callable[[str | None], Awaitable[Page[ItemT]]],\n"
                    ") -> AsyncIterator[ItemT]:",
                ),
                ("page = page_at(cursor)", "page = await page_at(cursor)"),
                ("class SyncAdministration:", "class AsyncAdministration:"),
                ("# PayorchClient's", "# AsyncPayorchClient's"),
            ],
        )
    )


def _replaced(source: str, replacements: list[tuple[str, str]]) -> str:
    s = source
    for old, new in replacements:
        if old not in s:
            raise SystemExit(f"generate_async: pattern not found: {old[:60]!r}")
        s = s.replace(old, new)
    return s


def _awaited(source: str) -> str:
    s = source
    # iter_* stay plain methods: they return an async iterator (each_item), not a coroutine.
    s = re.sub(r"(\n    )def (?!__|iter_)", r"\1async def ", s)
    s = s.replace("self.request(", "await self.request(")
    s = re.sub(r"-> Iterator\[(\w+)\]", r"-> AsyncIterator[\1]", s)
    s = s.replace("page = self.list_", "page = await self.list_")
    s = s.replace("yield from page.items", "for item in page.items:\n                yield item")
    return s


if __name__ == "__main__":
    (CLIENT / "_async.py").write_text(generate((CLIENT / "_sync.py").read_text()))
    (CLIENT / "_async_admin.py").write_text(generate_admin((CLIENT / "_sync_admin.py").read_text()))
