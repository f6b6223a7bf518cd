"""Routing, per merchant: the rules (a JSON form, each rule beside the checks' messages about
it), a dry run, the versions with activate, and each provider's authorization rate, volume and
health over the last hour and day (health: routing/health_history.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta

from fastapi import APIRouter, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.applications import service as applications
from payorch.connectors import service as connectors
from payorch.dashboard.health import merchant_providers
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, render
from payorch.dashboard.web import field as form_field
from payorch.errors import ResourceNotFound
from payorch.http.deps import Conn, ReadConn
from payorch.providers.registry import PROVIDER_IDS
from payorch.routing import checks, service
from payorch.routing.evaluate import evaluate
from payorch.routing.health_history import HealthWindow, health_windows
from payorch.routing.program import RoutingProgram
from payorch.routing.record import RoutingRecord
from payorch.routing.schemas import EvaluateRouting, version_body
from payorch.success_rates.history import ProviderRecord, provider_records

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

WINDOWS = (("Last hour", timedelta(hours=1)), ("Last 24 hours", timedelta(days=1)))
EXAMPLE = {"default": "success_rate", "rules": []}


@dataclass
class RuleView:
    """One submitted rule as the form shows it, with the messages about it."""

    index: int
    name: str
    text: str
    messages: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """The rules form: its text, each rule with its messages, and what concerns no one rule."""

    text: str
    rules: list[RuleView] = field(default_factory=list)
    general: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return bool(self.general or any(r.messages for r in self.rules))


@dataclass
class DryRun:
    values: dict[str, str]
    record: RoutingRecord | None = None
    error: str | None = None


def _draft(text: str) -> tuple[Draft, RoutingProgram | None]:
    """The text parsed and validated as a routing program; the messages where they belong."""
    draft = Draft(text)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        draft.general.append(f"Not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.")
        return draft, None
    rules = parsed.get("rules") if isinstance(parsed, dict) else None
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        name = rule.get("name") if isinstance(rule, dict) else None
        draft.rules.append(RuleView(index, str(name) if name else "(no name)", json.dumps(rule)))
    try:
        return draft, RoutingProgram.model_validate(parsed)
    except ValidationError as exc:
        for error in exc.errors():
            loc = [str(p) for p in error["loc"]]
            where = ".".join(loc[2:]) or "the rule"
            if len(loc) >= 2 and loc[0] == "rules" and loc[1].isdigit() and int(loc[1]) < len(draft.rules):
                draft.rules[int(loc[1])].messages.append(f"{where}: {error['msg']}")
            else:
                draft.general.append(f"{'.'.join(loc) or 'the program'}: {error['msg']}")
        return draft, None


async def _page(
    request: Request,
    viewer: Viewer,
    conn: AsyncConnection,
    merchant_id: str,
    *,
    draft: Draft | None = None,
    dry_run: DryRun | None = None,
) -> Response:
    listed = await applications.list_merchants(conn, viewer.caller.application_id)
    merchant = next((m for m in listed if m.id == merchant_id), None)
    if merchant is None:
        raise ResourceNotFound(f"No merchant account {merchant_id}.")
    active = await service.read(conn, viewer.caller, merchant_id)
    if draft is None:
        body = version_body(active)
        shown = {"default": body["default"], "rules": body["rules"]} if active is not None else EXAMPLE
        draft, _ = _draft(json.dumps(shown, indent=2))
    now = viewer.runtime.clock.now()
    windows = [
        (label, await provider_records(conn, viewer.caller.application_id, now - span, merchant_id))
        for label, span in WINDOWS
    ]
    entries = await merchant_providers(conn, viewer)
    health = next((e.connectors for e in entries if e.merchant.id == merchant_id), [])
    spans = [span for _, span in WINDOWS]
    history = {
        row.connector.id: [health_parts(h) for h in await health_windows(conn, row.connector, now, spans)]
        for row in health
    }
    status = 400 if draft.refused or (dry_run is not None and dry_run.error) else 200
    return render(
        request,
        "routing.html",
        viewer,
        status_code=status,
        title=f"Routing of {merchant.name}",
        merchant=merchant,
        active=active,
        draft=draft,
        dry_run=dry_run or DryRun({"amount": "1990", "currency": "CLP", "metadata": "", "provider": "auto"}),
        versions=(await service.versions(conn, viewer.caller, merchant_id, None, 20)).items,
        windows=windows,
        providers=_by_provider(windows),
        health=health,
        history=history,
        provider_ids=PROVIDER_IDS,
    )


def _duration(span: timedelta) -> str:
    seconds = round(span.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60} min"


def health_parts(window: HealthWindow) -> list[str]:
    """E.g. "skipped 3 times", "unavailable 12 min", "5 provider errors" (each kept on one line)."""
    parts = []
    if window.skipped:
        parts.append(f"skipped {window.skipped} time{'s' if window.skipped != 1 else ''}")
    if window.unavailable:
        parts.append(f"unavailable {_duration(window.unavailable)}")
    if not parts:
        parts.append("available throughout")
    errors = window.errors
    parts.append(f"{errors} provider error{'s' if errors != 1 else ''}" if errors else "no provider errors")
    return parts


def _by_provider(windows: list[tuple[str, list[ProviderRecord]]]) -> list[str]:
    return sorted({r.provider for _, records in windows for r in records})


@router.get("/routing")
async def merchants(request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    found = await applications.list_merchants(conn, viewer.caller.application_id)
    return render(request, "routing_merchants.html", viewer, title="Routing", merchants=found)


@router.get("/routing/{merchant_id}")
async def page(merchant_id: str, request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    return await _page(request, viewer, conn, merchant_id)


def _dry_run_values(form: FormData) -> dict[str, str]:
    return {name: form_field(form, name) for name in ("amount", "currency", "metadata", "provider")}


async def _dry_run(conn: AsyncConnection, viewer: Viewer, merchant_id: str, values: dict[str, str]) -> DryRun:
    run = DryRun(values)
    try:
        metadata = json.loads(values["metadata"]) if values["metadata"] else {}
    except json.JSONDecodeError as exc:
        run.error = f"metadata: not JSON ({exc.msg})"
        return run
    amount = values["amount"]
    try:
        body = EvaluateRouting.model_validate(
            {
                "amount": int(amount) if amount.isascii() and amount.isdigit() else amount,
                "currency": values["currency"].upper(),
                "metadata": metadata,
                "provider": values["provider"] or "auto",
            }
        )
    except ValidationError as exc:
        run.error = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return run
    runtime = viewer.runtime
    health, rates = runtime.provider_health, runtime.success_rates
    run.record = await evaluate(conn, health, rates, viewer.caller, merchant_id, body)
    return run


@router.post("/routing/{merchant_id}")
async def change(
    merchant_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    action = form_field(form, "action")
    if action == "evaluate":
        run = await _dry_run(conn, viewer, merchant_id, _dry_run_values(form))
        return await _page(request, viewer, conn, merchant_id, dry_run=run)
    if action == "activate":
        number = form_field(form, "version")
        if not (number.isascii() and number.isdigit()):
            raise ResourceNotFound(f"No routing version {number}.")
        await service.activate(conn, viewer.runtime.clock, viewer.caller, merchant_id, int(number))
        return back_to(request, f"/routing/{merchant_id}?notice=activated")
    text = form.get("program")
    draft, program = _draft(text if isinstance(text, str) else "")
    if program is not None:
        await service.check_merchant(conn, viewer.caller, merchant_id)
        for problem in checks.problems(program, await connectors.merchant_connectors(conn, merchant_id)):
            draft.rules[problem.index].messages.append(f"{problem.field}: {problem.reason}")
    if program is None or draft.refused:
        return await _page(request, viewer, conn, merchant_id, draft=draft)
    await service.save_version(conn, viewer.runtime.clock, viewer.caller, merchant_id, program)
    return back_to(request, f"/routing/{merchant_id}?notice=saved")
