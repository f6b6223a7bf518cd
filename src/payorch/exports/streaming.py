"""An export's answer: made only as fast as it is read, ended when its reader stalls, and one of
its application's export slots held until it ends, however it ends.

Why: an export made as fast as the process could make it (Starlette's StreamingResponse) held
the event loop until the socket buffers filled, and behind a buffering proxy for the whole
export, so one tenant's unread exports slowed every other tenant (issue 37; figures in
docs/performance.md, "Exports: one tenant's unread exports beside another").

- **Backpressure**: after each chunk an empty one is sent; the server's send waits while its
  buffer for the connection is over its high-water mark (uvicorn's flow control, 64 KiB), so the
  next chunk, and the next page of rows, is made only once this one is on its way to the client;
  the connection's kernel send buffer is kept small (SEND_BUFFER), so "on its way" is close to
  "read". Between chunks the loop is yielded to, so other requests run between them.
- **A stalled reader**: a send that makes no progress for PAYORCH_EXPORT_STALL_SECONDS ends the
  export and drops the connection (closing would wait for the reader to take the buffer).
- **The slot**: released when the answer ends, is ended or the client goes away.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.clock import isoformat
from payorch.exports import service
from payorch.exports.schemas import ExportKind, ExportQuery
from payorch.exports.slots import ExportSlot
from payorch.http.server_protocol import ConnectionControl, connection_control
from payorch.runtime import Runtime

log = logging.getLogger("payorch.exports")
# The kernel's send buffer of an export's connection (Linux doubles it): what is made ahead of
# a reader beyond the server's own 64 KiB. Linux grows it to 4 MiB otherwise, some 11,000 rows
# made for a reader that takes none. At 100 ms round trip it allows some 1.3 MB/s to one
# client; behind nginx on the same host or network the round trip is well under a millisecond.
SEND_BUFFER = 64 * 1024


class _ReaderStalled(Exception):
    pass


class ExportResponse(StreamingResponse):
    def __init__(self, export: service.Export, slot: ExportSlot, stall_seconds: float) -> None:
        headers = {
            "Content-Disposition": f'attachment; filename="{export.filename}"',
            # nginx passes the answer on as it comes instead of buffering it (deploy/nginx).
            "X-Accel-Buffering": "no",
        }
        super().__init__(export.content, media_type=export.media_type, headers=headers)
        self._slot = slot
        self._stall_seconds = stall_seconds
        self._control: ConnectionControl | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._control = connection_control(scope)
        if self._control is not None:
            self._control.limit_send_buffer(SEND_BUFFER)
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._slot.release()

    async def _sent(self, send: Send, message: Message) -> None:
        try:
            async with asyncio.timeout(self._stall_seconds):
                await send(message)
        except TimeoutError:
            raise _ReaderStalled from None

    async def stream_response(self, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        try:
            await self._sent(send, start)
            async for chunk in self.body_iterator:
                body = chunk.encode(self.charset) if isinstance(chunk, str) else bytes(chunk)
                await self._sent(send, {"type": "http.response.body", "body": body, "more_body": True})
                # Waits while the chunk is still over the buffer's high-water mark.
                await self._sent(send, {"type": "http.response.body", "body": b"", "more_body": True})
                await asyncio.sleep(0)  # the other requests' turn
            await self._sent(send, {"type": "http.response.body", "body": b"", "more_body": False})
        except _ReaderStalled:
            log.info("export ended: its reader took nothing for %s s", self._stall_seconds)
            if self._control is not None:
                self._control.abort()


async def streamed(runtime: Runtime, caller: Caller, kind: ExportKind, query: ExportQuery) -> ExportResponse:
    """The caller's export as the answer, once its application has a slot for one more
    (else 409 LIMIT_EXCEEDED); rows are read through Database.listing as the lists read. The
    export is an activity entry ("export.created": its kind, range and format), written before
    the first row is."""
    settings = runtime.settings
    slot = runtime.export_slots.take(caller.application_id, settings.max_concurrent_exports)
    try:
        export = service.export(runtime.database.listing, caller, kind, query)
        logged = {"from": isoformat(query.from_), "to": isoformat(query.to), "format": query.format}
        async with runtime.phases.transaction() as conn:
            await record_by(conn, runtime.clock, caller, "export.created", ("export", kind.value), logged)
        return ExportResponse(export, slot, settings.export_stall_seconds)
    except BaseException:
        slot.release()
        raise
