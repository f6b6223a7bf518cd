"""An ACTIVE link's end: COMPLETED once max_payments of its intents are paid, EXPIRED once its
expires_at passed (by the project's clock). Checked when a link is read, when its page is opened
or paid, when one of its intents is authorized, and by the worker's sweep; each end is written
once (a compare-and-set on the status) with its event, in the caller's transaction."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.events import service as events
from payorch.events.catalogue import PaymentLinkCompleted, PaymentLinkData, PaymentLinkExpired
from payorch.links import repository
from payorch.links.records import LinkStatus, PaymentLink, Tally


def due_status(link: PaymentLink, tally: Tally, clock: Clock) -> LinkStatus:
    """The status the link has now, whatever is stored (a list shows it without writing)."""
    if link.status != LinkStatus.ACTIVE:
        return LinkStatus(link.status)
    if tally.payments_count >= link.max_payments:
        return LinkStatus.COMPLETED
    if link.expires_at is not None and link.expires_at <= clock.now():
        return LinkStatus.EXPIRED
    return LinkStatus.ACTIVE


async def tally_of(conn: AsyncConnection, link_id: str) -> Tally:
    return (await repository.tallies(conn, [link_id])).get(link_id, Tally())


async def settle(conn: AsyncConnection, clock: Clock, link: PaymentLink) -> tuple[PaymentLink, Tally]:
    """The link as it is now, its end written (with its event) if it is due."""
    tally = await tally_of(conn, link.id)
    due = due_status(link, tally, clock)
    if due == link.status:
        return link, tally
    now = clock.now()
    if await repository.move(conn, link.id, expected=link.status, new=due.value, at=now):
        model = PaymentLinkCompleted if due == LinkStatus.COMPLETED else PaymentLinkExpired
        await events.emit_payload(
            conn, application_id=link.application_id, payload=_payload(model, link, tally), at=now
        )
    return replace(link, status=due.value, updated_at=now), tally


async def after_payment(conn: AsyncConnection, clock: Clock, link_id: str) -> None:
    """One of the link's intents was just authorized (payorch.intents.service.apply_move)."""
    link = await repository.get_any(conn, link_id)
    if link is not None:
        await settle(conn, clock, link)


async def sweep(conn: AsyncConnection, clock: Clock, limit: int = 200) -> int:
    """The worker's job: end the ACTIVE links past their expiry; answers how many moved."""
    moved = 0
    for link_id in await repository.expired_ids(conn, clock.now(), limit):
        link = await repository.get_any(conn, link_id)
        if link is not None and (await settle(conn, clock, link))[0].status != link.status:
            moved += 1
    return moved


def _payload(model: type[PaymentLinkData], link: PaymentLink, tally: Tally) -> PaymentLinkData:
    return model(
        payment_link_id=link.id,
        merchant_account_id=link.merchant_account_id,
        external_reference=link.external_reference,
        metadata=link.metadata,
        payments_count=tally.payments_count,
        amount_collected=tally.amount_collected,
        currency=link.currency,
    )
