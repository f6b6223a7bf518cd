"""The webhook HTTP/1.1 client against raw servers: keep-alive, a server that drops idle
connections, bodies delimited by length, chunks or the end of the connection, big and bad answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from payorch.webhooks.http1 import Client, HttpError

Handler = Callable[[bytes], tuple[bytes, bool]]  # request head -> (answer bytes, close after)


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[tuple[int, list[int]]]:
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer.get_extra_info("peername")[1])
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                answer, close = handler(head)
                writer.write(answer)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, connections
    finally:
        server.close()
        await server.wait_closed()


async def post(client: Client, port: int) -> tuple[int, bytes]:
    answer = await client.post(
        scheme="http",
        addresses=["127.0.0.1"],
        port=port,
        host="hooks.test",
        target="/h",
        headers={"X-Pay-Event-Id": "evt_1"},
        body=b'{"a":1}',
    )
    return answer.status, answer.body


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def test_keeps_the_connection_alive() -> None:
    async with raw_server(lambda head: (OK, False)) as (port, connections):
        client = Client()
        for _ in range(3):
            assert await post(client, port) == (200, b"ok")
        await client.aclose()
    assert len(connections) == 1


async def test_sends_host_and_target_of_the_url() -> None:
    heads: list[bytes] = []

    def handler(head: bytes) -> tuple[bytes, bool]:
        heads.append(head)
        return OK, False

    async with raw_server(handler) as (port, _):
        client = Client()
        await post(client, port)
        await client.aclose()
    assert heads[0].startswith(b"POST /h HTTP/1.1\r\n")
    assert f"\r\nHost: hooks.test:{port}\r\n".encode() in heads[0]
    assert b"\r\nContent-Length: 7\r\n" in heads[0]


async def test_reconnects_once_when_the_server_dropped_an_idle_connection() -> None:
    # The server closes after each answer without saying so: the reused connection is dead.
    async with raw_server(lambda head: (OK, True)) as (port, connections):
        client = Client()
        assert await post(client, port) == (200, b"ok")
        await asyncio.sleep(0.05)
        assert await post(client, port) == (200, b"ok")
        await client.aclose()
    assert len(connections) == 2


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            (201, b"abc"),
        ),
        (
            b"HTTP/1.0 500 Oops\r\n\r\nserver error",
            (500, b"server error"),
        ),  # ends with the connection
        (b"HTTP/1.1 204 No Content\r\n\r\n", (204, b"")),
    ],
)
async def test_reads_every_kind_of_body(answer: bytes, expected: tuple[int, bytes]) -> None:
    async with raw_server(lambda head: (answer, True)) as (port, _):
        client = Client()
        assert await post(client, port) == expected
        await client.aclose()


async def test_reads_no_more_than_max_body_and_drops_that_connection() -> None:
    big = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000
    async with raw_server(lambda head: (big, False)) as (port, connections):
        client = Client(max_body=1000)
        status, body = await post(client, port)
        assert status == 200 and body == b"x" * 1000
        await post(client, port)
        await client.aclose()
    assert len(connections) == 2


async def test_a_malformed_answer_is_an_error() -> None:
    async with raw_server(lambda head: (b"SMTP ready\r\n\r\n", True)) as (port, _):
        client = Client()
        with pytest.raises(HttpError):
            await post(client, port)
        await client.aclose()


async def test_a_refused_connection_is_an_error() -> None:
    async with raw_server(lambda head: (OK, False)) as (port, _):
        pass  # closed: nothing listens on that port any more
    client = Client()
    with pytest.raises(HttpError):
        await post(client, port)


async def test_tries_the_next_vetted_address_when_one_refuses() -> None:
    async with raw_server(lambda head: (OK, False)) as (port, connections):
        client = Client()
        answer = await client.post(
            scheme="http",
            addresses=["::1", "127.0.0.1"],  # nothing listens on ::1 (IPv4 server)
            port=port,
            host="localhost",
            target="/h",
            headers={},
            body=b"{}",
        )
        await client.aclose()
    assert answer.status == 200 and len(connections) == 1
