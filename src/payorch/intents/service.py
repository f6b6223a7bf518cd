"""The rules of payment intents: creation, reading, and applying a move of the state machine."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import repository as applications
from payorch.auth.service import Caller
from payorch.clock import Clock, isoformat
from payorch.connectors import repository as connectors
from payorch.errors import ConnectorNotConfigured, InvalidState, ResourceNotFound
from payorch.events import repository as events_repository
from payorch.events import service as events
from payorch.events.types import EventType
from payorch.ids import new_id
from payorch.intents import repository
from payorch.intents.schemas import CreatePaymentIntent, intent_body
from payorch.intents.states import EVENT_OF_MOVE, IntentStatus, Move, next_status
from payorch.providers import AUTO


async def create_intent(
    conn: AsyncConnection, clock: Clock, caller: Caller, request: CreatePaymentIntent
) -> dict[str, Any]:
    if not await applications.merchant_belongs_to(
        conn, request.merchant_account_id, caller.application_id
    ):
        raise ResourceNotFound(f"No merchant account {request.merchant_account_id}.")
    if request.provider != AUTO and not await connectors.enabled_provider(
        conn, request.merchant_account_id, request.provider
    ):
        raise ConnectorNotConfigured(f"The provider {request.provider} is not enabled for this merchant.")
    now = clock.now()
    intent_id = new_id("payi")
    values = {
        "id": intent_id,
        "application_id": caller.application_id,
        "merchant_account_id": request.merchant_account_id,
        "status": IntentStatus.CREATED.value,
        "external_reference": request.external_reference,
        "amount": request.amount,
        "currency": request.currency,
        "description": request.description,
        "requested_provider": request.provider,
        "provider": None,
        "return_url": request.return_url,
        "metadata": request.metadata,
        "created_at": now,
        "updated_at": now,
    }
    await repository.insert_intent(conn, **values)
    event = await events.emit(
        conn,
        application_id=caller.application_id,
        type=EventType.PAYMENT_INTENT_CREATED,
        payment_intent_id=intent_id,
        data={
            "merchant_account_id": request.merchant_account_id,
            "external_reference": request.external_reference,
            "amount": request.amount,
            "currency": request.currency,
            "requested_provider": request.provider,
        },
        at=now,
    )
    row = _IntentValues(values)
    return intent_body(row, [_TimelineValues(event.type, now)])


async def read_intent(conn: AsyncConnection, caller: Caller, intent_id: str) -> dict[str, Any]:
    row = await repository.get_with_payment(conn, caller.application_id, intent_id)
    if row is None:
        raise ResourceNotFound(f"No payment intent {intent_id}.")
    timeline = await events_repository.timeline(conn, intent_id)
    return intent_body(row, timeline, _payment_of(row))


async def apply_move(
    conn: AsyncConnection,
    clock: Clock,
    intent: Row,  # type: ignore[type-arg]
    move: Move,
    *,
    data: dict[str, Any] | None = None,
    changes: dict[str, Any] | None = None,
) -> IntentStatus:
    """Move the intent and write the move's event, both in ``conn``'s transaction.

    Compare-and-set on the status read by the caller: if another transaction moved the intent
    meanwhile, nothing is written and INVALID_STATE is raised with the status found.
    """
    new = next_status(intent.status, move)
    now = clock.now()
    if not await repository.compare_and_set_status(
        conn, intent.id, expected=intent.status, new=new.value, at=now, changes=changes or {}
    ):
        raise InvalidState(await repository.status_of(conn, intent.id) or intent.status)
    event_type = EVENT_OF_MOVE[move]
    if event_type is not None:
        await events.emit(
            conn,
            application_id=intent.application_id,
            type=event_type,
            payment_intent_id=intent.id,
            data=data or {},
            at=now,
        )
    return new


def _payment_of(row: Row) -> dict[str, Any] | None:  # type: ignore[type-arg]
    """The intent's payment object, once the provider authorized."""
    if row.payment_id is None:
        return None
    return {
        "id": row.payment_id,
        "status": row.payment_status,
        "authorization_code": row.payment_authorization_code,
        "authorized_at": isoformat(row.payment_authorized_at),
    }


class _IntentValues:
    """Attribute access over the values just inserted, to answer without reading back."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


class _TimelineValues:
    def __init__(self, type: str, created_at: Any) -> None:
        self.type = type
        self.created_at = created_at
