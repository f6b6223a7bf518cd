"""A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL here) that can be told to go silent:
it stops relaying in both directions without closing anything, as a network that drops packets,
a frozen host or a proxy that hangs does. New connections are still accepted meanwhile (the
kernel would), and get nothing. ``speak()`` relays again, for connections made after it (what was
dropped meanwhile cannot be replayed: the old ones are broken for good, as after a real outage).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.engine import make_url

CHUNK = 65536


class SilentProxy:
    def __init__(self, host: str, port: int) -> None:
        self._upstream = (host, port)
        self.silent = False
        self._pumps: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    def silence(self) -> None:
        self.silent = True

    def speak(self) -> None:
        self.silent = False

    def url_for(self, database_url: str) -> str:
        """``database_url`` with the proxy's address in place of the server's."""
        url = make_url(database_url).set(host="127.0.0.1", port=self.port)
        return url.render_as_string(hide_password=False)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        if self.silent:
            await self._hold(reader)
            return
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        self._writers.add(up_writer)
        for source, target in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(source, target))
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _hold(self, reader: asyncio.StreamReader) -> None:
        while await reader.read(CHUNK):
            pass  # read and dropped: a silent peer

    async def _pump(self, source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await source.read(CHUNK):
                if self.silent:
                    continue  # dropped, the connection left open
                target.write(data)
                await target.drain()
        if not self.silent:
            target.close()  # a close is relayed while the proxy speaks

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._pumps):
            task.cancel()
        for writer in self._writers:
            writer.close()
        await asyncio.gather(*self._pumps, return_exceptions=True)


@asynccontextmanager
async def silent_proxy(database_url: str) -> AsyncIterator[SilentProxy]:
    """A proxy in front of ``database_url``'s server, closed when the block ends."""
    url = make_url(database_url)
    proxy = SilentProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()
