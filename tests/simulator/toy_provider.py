"""A toy simulated provider for the tests of the shared endpoint wrapper (simulator/api.py) and
replay store (simulator/replays.py): its own credential header, error bodies and refusal, and
one write whose state is a row it sets (a fault row named after the mark, so no table of its own)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace

import httpx
import pytest
from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.crypto import Cipher
from payorch.db import Phases
from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.jsontypes import JsonObject
from payorch.runtime import Runtime
from payorch.simulator import repository
from payorch.simulator.api import Answer, ProviderApi, Refusals, Replays
from payorch.simulator.credentials import PUBLIC_OWNER

NAME = "toy"
BASE = "/simulator/toy"
PUBLIC_KEY = "toy-public"
REFUSALS = Refusals(
    unauthorized={"toy_error": "who are you"},
    too_many={"toy_error": "slow down"},
    failed={"toy_error": "broken"},
    timed_out={"toy_error": "too late"},
)
CONFLICT = {"toy_error": "key used for another request"}


class ToyRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _credentials(request: Request) -> Mapping[str, str]:
    return {"key": request.headers.get("x-toy-key", "")}


def _owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    key = presented.get("key", "")
    if key == PUBLIC_KEY:
        return PUBLIC_OWNER
    return key.removeprefix("app-") if key.startswith("app-") and len(key) > 4 else None


API = ProviderApi(
    name=NAME,
    credentials=_credentials,
    owner_of=_owner_of,
    refusals=REFUSALS,
    refused=ToyRefused,
    refusal=lambda error: (error.status, {"toy_error": str(error)}),
    replays=Replays("toy-key", CONFLICT, replayed_headers={"Toy-Replayed": "true"}),
)
PATH_ONLY = replace(API, replays=Replays("toy-key", CONFLICT, compares_body=False))


@dataclass
class Ledger:
    """What the toy's calls did: how many ran, and what each after-commit work read."""

    calls: int = 0
    after: list[str] = field(default_factory=list)
    gate: asyncio.Event = field(default_factory=asyncio.Event)  # what a "slow" call waits for


def toy_router(ledger: Ledger) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    async def mark(request: Request, conn: Conn, name: str, api: ProviderApi[ToyRefused]) -> Response:
        runtime = runtime_of(request)
        body: JsonObject = await request.json()

        async def run(owner: str) -> Answer:
            ledger.calls += 1
            value = str(body.get("value", "set"))
            await repository.set_fault_mode(conn, owner, f"toy-{name}", value, runtime.clock.now())
            if body.get("refuse"):
                raise ToyRefused(402, f"{name} refused")

            async def after(rt: Runtime, phases: Phases) -> None:  # reads what committed
                async with phases.reading() as read:
                    ledger.after.append(await repository.fault_mode(read, owner, f"toy-{name}"))

            return Answer({"name": name, "value": value, "call": ledger.calls}, 201, after)

        return await api.answer(request, conn, run)

    @router.post(BASE + "/marks/{name}")
    async def set_mark(name: str, request: Request, conn: Conn) -> Response:
        return await mark(request, conn, name, API)

    @router.post(BASE + "/plain/{name}")
    async def set_plain(name: str, request: Request, conn: Conn) -> Response:
        return await mark(request, conn, name, PATH_ONLY)

    @router.post(BASE + "/slow/{name}")
    async def slow(name: str, request: Request, conn: Conn) -> Response:
        """Writes nothing of its own; waits for the gate when asked (two calls racing)."""
        body: JsonObject = await request.json()

        async def run(owner: str) -> Answer:
            ledger.calls += 1
            call = ledger.calls
            if body.get("wait"):
                await ledger.gate.wait()
            return Answer({"name": name, "call": call})

        return await API.answer(request, conn, run)

    @router.get(BASE + "/marks/{name}")
    async def read_mark(name: str, request: Request, conn: ReadConn) -> Response:
        async def run(owner: str) -> Answer:
            ledger.calls += 1
            return Answer({"value": await repository.fault_mode(conn, owner, f"toy-{name}")})

        return await API.answer(request, conn, run)

    return router


@dataclass
class Toy:
    http: httpx.AsyncClient
    ledger: Ledger
    runtime: Runtime
    # Two owners' keys, new in each test (the database outlives it).
    one: str = field(default_factory=lambda: "app-" + secrets.token_hex(8))
    two: str = field(default_factory=lambda: "app-" + secrets.token_hex(8))

    async def set_fault(self, owner_key: str, mode: str) -> None:
        owner = owner_key.removeprefix("app-")
        async with self.runtime.phases.transaction() as conn:
            await repository.set_fault_mode(conn, owner, NAME, mode, self.runtime.clock.now())

    async def mark(self, owner_key: str, name: str, key: str | None = None, **body: object) -> httpx.Response:
        headers = {"X-Toy-Key": owner_key, **({"Toy-Key": key} if key else {})}
        return await self.http.post(f"{BASE}/marks/{name}", json=body, headers=headers)

    async def read(self, owner_key: str, name: str) -> str:
        answer = await self.http.get(f"{BASE}/marks/{name}", headers={"X-Toy-Key": owner_key})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["value"])


@pytest.fixture
async def toy(runtime: Runtime) -> AsyncIterator[Toy]:
    ledger = Ledger()
    app = create_app(runtime=runtime)
    app.include_router(toy_router(ledger))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as http:
        yield Toy(http, ledger, runtime)
