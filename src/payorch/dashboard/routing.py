"""Routing, per merchant: the rules (a JSON form, each rule beside the checks' messages about
it, saved as a draft or active at once), a dry run of any version with amounts typed as people
write them, the versions with open and activate, and each provider's authorization rate, volume
and health over the last hour and day (health: routing/health_history.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta

from fastapi import APIRouter, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.amount_text import UnreadableAmount, read_amount
from payorch.applications import service as applications
from payorch.connectors import service as connectors
from payorch.dashboard.health import merchant_providers
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, render
from payorch.dashboard.web import field as form_field
from payorch.errors import ConnectorNotConfigured, CurrencyNotSupported, ResourceNotFound
from payorch.http.deps import Conn, ReadConn
from payorch.money import currency_problem
from payorch.providers.registry import PROVIDER_IDS
from payorch.routing import checks, service
from payorch.routing.evaluate import evaluate
from payorch.routing.health_history import HealthWindow, health_windows
from payorch.routing.program import RoutingProgram
from payorch.routing.record import RoutingRecord
from payorch.routing.records import RoutingVersion
from payorch.routing.schemas import EvaluateRouting, version_body
from payorch.success_rates.history import ProviderRecord, provider_records

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

WINDOWS = (("Last hour", timedelta(hours=1)), ("Last 24 hours", timedelta(days=1)))
DRY_RUN_FIELDS = ("amount", "currency", "metadata", "provider", "version")
METADATA_HINT = 'type an object of strings such as {"channel": "app"}, or nothing.'


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
    """The dry-run form: what was typed, the decision, or a message per field ("" the form's)."""

    values: dict[str, str]
    record: RoutingRecord | None = None
    problems: dict[str, str] = field(default_factory=dict)


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
    opened: int | None = None,
) -> Response:
    listed = await applications.list_merchants(conn, viewer.caller.application_id)
    merchant = next((m for m in listed if m.id == merchant_id), None)
    if merchant is None:
        raise ResourceNotFound(f"No merchant account {merchant_id}.")
    active = await service.read(conn, viewer.caller, merchant_id)
    shown_version = active
    if opened is not None:  # a version opened from the list, or dry-run: its rules in the form
        try:
            shown_version = await service.version_of(conn, viewer.caller, merchant_id, opened)
        except ResourceNotFound:
            if dry_run is None:
                raise
            opened = None  # the dry run's form says so beside its version
    if draft is None:
        # What is in force (no version: the connectors' priority), never an example.
        body = version_body(shown_version)
        draft, _ = _draft(json.dumps({"default": body["default"], "rules": body["rules"]}, indent=2))
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
    listed_versions = (await service.versions(conn, viewer.caller, merchant_id, None, 20)).items
    status = 400 if draft.refused or (dry_run is not None and dry_run.problems) else 200
    chosen = "" if opened is None else str(opened)
    typed = {"amount": "1,990", "currency": "CLP", "metadata": "", "provider": "auto", "version": chosen}
    return render(
        request,
        "routing.html",
        viewer,
        status_code=status,
        title=f"Routing of {merchant.name}",
        merchant=merchant,
        active=active,
        draft=draft,
        dry_run=dry_run or DryRun(typed),
        opened=shown_version if opened is not None else None,
        states={v.version: state_of(v) for v in listed_versions},
        versions=listed_versions,
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


def _number(text: str) -> int | None:
    """A version number from a form or a link; None if it is not one."""
    return int(text) if text.isascii() and text.isdigit() and 1 <= len(text) <= 9 else None


@router.get("/routing/{merchant_id}")
async def page(merchant_id: str, request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    asked = request.query_params.get("version")
    opened = None if asked is None else _number(asked)
    if asked is not None and opened is None:
        raise ResourceNotFound(f"No routing version {asked[:20]}.")
    return await _page(request, viewer, conn, merchant_id, opened=opened)


def _dry_run_values(form: FormData) -> dict[str, str]:
    return {name: form_field(form, name) for name in DRY_RUN_FIELDS}


def _dry_run_body(values: dict[str, str], problems: dict[str, str]) -> EvaluateRouting | None:
    """The API's dry-run request from the form, read as people type (the amount under the one
    rule, amount_text.py); None with a message per field when something is not right."""
    currency = values["currency"].strip().upper()
    amount, metadata = 0, object()  # read below; sent only when nothing is wrong
    problem = currency_problem(currency)
    if problem is not None:
        problems["currency"] = f"The currency {problem}."
    else:
        try:
            amount = read_amount(values["amount"], currency)
        except UnreadableAmount as unreadable:
            problems["amount"] = str(unreadable)
    try:
        metadata = json.loads(values["metadata"]) if values["metadata"].strip() else {}
    except json.JSONDecodeError as exc:
        problems["metadata"] = f"Not JSON ({exc.msg}): {METADATA_HINT}"
    if "metadata" not in problems and not isinstance(metadata, dict):
        problems["metadata"] = f"Not a JSON object: {METADATA_HINT}"
    version = _number(values["version"]) if values["version"] else None
    if values["version"] and version is None:
        problems["version"] = "Choose a version from the list."
    if problems:
        return None
    try:
        return EvaluateRouting.model_validate(
            {
                "amount": amount,
                "currency": currency,
                "metadata": metadata,
                "provider": values["provider"] or "auto",
                "version": version,
            }
        )
    except ValidationError as exc:
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else ""
            where = name if name in DRY_RUN_FIELDS else ""
            problems.setdefault(where, f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}")
        return None


async def _dry_run(conn: AsyncConnection, viewer: Viewer, merchant_id: str, values: dict[str, str]) -> DryRun:
    run = DryRun(values)
    body = _dry_run_body(values, run.problems)
    if body is None:
        return run
    runtime = viewer.runtime
    health, rates = runtime.provider_health, runtime.success_rates
    try:
        run.record = await evaluate(conn, health, rates, viewer.caller, merchant_id, body)
    except (ConnectorNotConfigured, CurrencyNotSupported) as refused:  # as a checkout would answer
        run.problems["provider"] = refused.message
    except ResourceNotFound as missing:  # the merchant is checked first: here, the version
        run.problems["version"] = missing.message
    return run


@router.post("/routing/{merchant_id}")
async def change(
    merchant_id: str, request: Request, viewer: ViewerDep, form: FormDep, conn: Conn
) -> Response:
    action = form_field(form, "action")
    if action == "evaluate":
        run = await _dry_run(conn, viewer, merchant_id, _dry_run_values(form))
        opened = _number(run.values["version"])
        return await _page(request, viewer, conn, merchant_id, dry_run=run, opened=opened)
    if action == "activate":
        number = _number(form_field(form, "version"))
        if number is None:
            raise ResourceNotFound(f"No routing version {form_field(form, 'version')[:20]}.")
        await service.activate(conn, viewer.runtime.clock, viewer.caller, merchant_id, number)
        return back_to(request, f"/routing/{merchant_id}?notice=activated")
    text = form.get("program")
    draft, program = _draft(text if isinstance(text, str) else "")
    if program is not None:
        await service.check_merchant(conn, viewer.caller, merchant_id)
        for problem in checks.problems(program, await connectors.merchant_connectors(conn, merchant_id)):
            draft.rules[problem.index].messages.append(f"{problem.field}: {problem.reason}")
    if program is None or draft.refused:
        return await _page(request, viewer, conn, merchant_id, draft=draft)
    drafting = action == "draft"  # else "save": active at once
    saved = await service.save_version(
        conn, viewer.runtime.clock, viewer.caller, merchant_id, program, activate=not drafting
    )
    if drafting:  # opened, so that its dry run is one click away
        return back_to(request, f"/routing/{merchant_id}?version={saved.version}&notice=drafted#dry-title")
    return back_to(request, f"/routing/{merchant_id}?notice=saved")


def state_of(version: RoutingVersion) -> str:
    """active; draft: never active; earlier: active once."""
    if version.active:
        return "active"
    return "draft" if version.activated_at is None else "earlier"
