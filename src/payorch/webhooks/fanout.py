"""The outbox fan-out: called by events.service.emit in the transaction that writes the event, so
an event and its deliveries commit together (or not at all). The webhooks domain writes its own
table here, in the caller's transaction (its ``conn``)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import Row
from payorch.events.records import Event
from payorch.ids import new_id
from payorch.webhooks import repository
from payorch.webhooks.records import PENDING, Delivery

# What emit runs together with the event's INSERT: the rows given to fan_out as ``endpoints``
# (by column: ``id``, an enabled endpoint, and ``events``, its filter; [] = every type).
SUBSCRIPTIONS = repository.SUBSCRIBED_ENDPOINTS


async def fan_out(
    conn: AsyncConnection, event: Event, endpoints: Sequence[Row] | None = None
) -> int:
    """One PENDING delivery of ``event``, due now, per enabled endpoint of its application
    subscribed to its type ([] = all).

    ``endpoints``: the rows of SUBSCRIPTIONS, read in this transaction (None: read them here).
    """
    application_id, event_type = event.application_id, event.type
    if endpoints is None:
        subscribed = await repository.subscribed_endpoints(conn, application_id)
    else:
        subscribed = [(str(row["id"]), _texts(row["events"])) for row in endpoints]
    targets = [eid for eid, events in subscribed if not events or event_type in events]
    if not targets:
        return 0
    await repository.insert_deliveries(conn, [new_delivery(event, endpoint_id) for endpoint_id in targets])
    await repository.notify_workers(conn)
    return len(targets)


def new_delivery(event: Event, endpoint_id: str) -> Delivery:
    """A PENDING delivery of ``event`` to the endpoint, due at once."""
    at = event.created_at
    return Delivery(
        id=new_id("whd"),
        application_id=event.application_id,
        endpoint_id=endpoint_id,
        event_id=event.id,
        event_type=event.type,
        status=PENDING,
        attempts=0,
        schedule_attempts=0,
        next_attempt_at=at,
        leased_until=None,
        lease_token=None,
        last_attempt_at=None,
        response_status=None,
        response_excerpt=None,
        error=None,
        created_at=at,
        updated_at=at,
    )


# PostgreSQL's one-statement create (payorch.db.one_statement): the fan-out as fragments of that
# statement (repository's SUBSCRIBED, FITS, DELIVERIES and NOTICE fragments). It carries ids for
# this many deliveries; an application with more endpoints subscribed to the event writes nothing
# there and takes the full path (fan_out above).
FAN_OUT_AT_ONCE = 4
SUBSCRIBED_FRAGMENT = repository.SUBSCRIBED_FRAGMENT
FITS_FRAGMENT = repository.FITS_FRAGMENT
DELIVERIES_FRAGMENT = repository.DELIVERIES_FRAGMENT
NOTICE_FRAGMENT = repository.NOTICE_FRAGMENT


def fan_out_parameters(event: Event) -> dict[str, object]:
    """The fanout_* parameters of the fragments above, for ``event``."""
    return {
        "fanout_ids": [new_id("whd") for _ in range(FAN_OUT_AT_ONCE)],
        "fanout_capacity": FAN_OUT_AT_ONCE,
        "fanout_event_id": event.id,
        "fanout_event_type": event.type,
        "fanout_at": event.created_at,
    }


def _texts(value: object) -> list[str]:
    return [str(each) for each in value] if isinstance(value, list) else []
