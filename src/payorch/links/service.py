"""The rules of payment links (API and dashboard): create, read, list, deactivate.

Every function runs in the caller's transaction and never commits. A change is logged in the
activity log in the same transaction (payorch.activity)."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.errors import InvalidState, ResourceNotFound, ValidationFailed
from payorch.ids import new_id
from payorch.limits import refuse_at_cap
from payorch.links import repository
from payorch.links.records import LinkDetail, LinkPayment, LinkStatus, PaymentLink, Tally
from payorch.links.schemas import CreatePaymentLink, DeactivatePaymentLink, LinkListQuery
from payorch.links.settle import due_status, settle
from payorch.pagination import Page, page_of

RESOURCE = "payment_link"  # the activity log's resource type


async def create_link(
    conn: AsyncConnection, clock: Clock, caller: Caller, request: CreatePaymentLink, *, limit: int
) -> LinkDetail:
    if not await applications.merchant_belongs_to(conn, request.merchant_account_id, caller.application_id):
        raise ResourceNotFound(f"No merchant account {request.merchant_account_id}.")
    now = clock.now()
    if request.expires_at is not None and request.expires_at <= now:
        raise ValidationFailed.field("expires_at", "must be in the future")
    await refuse_at_cap(
        conn,
        caller.application_id,
        repository.count_active,
        limit=limit,
        what="active payment links",
        remedy="Deactivate a link that is no longer needed, then create this one.",
    )
    link = PaymentLink(
        id=new_id("plink"),
        application_id=caller.application_id,
        merchant_account_id=request.merchant_account_id,
        status=LinkStatus.ACTIVE.value,
        amount=request.amount,
        currency=request.currency,
        description=request.description,
        external_reference=request.external_reference,
        expires_at=request.expires_at,
        max_payments=request.max_payments,
        after_payment_url=request.after_payment_url,
        metadata=request.metadata,
        buyer_message=None,
        created_at=now,
        updated_at=now,
    )
    await repository.insert_link(conn, link)
    logged = {
        "merchant_account_id": link.merchant_account_id,
        "amount": link.amount,
        "currency": link.currency,
        "max_payments": link.max_payments,
        "expires_at": link.expires_at.isoformat() if link.expires_at else None,
    }
    await record_by(conn, clock, caller, "payment_link.created", (RESOURCE, link.id), logged)
    return LinkDetail(link, Tally())


async def _link(conn: AsyncConnection, caller: Caller, link_id: str) -> PaymentLink:
    link = await repository.get(conn, caller.application_id, link_id)
    if link is None:
        raise ResourceNotFound(f"No payment link {link_id}.")
    return link


async def read_link(conn: AsyncConnection, clock: Clock, caller: Caller, link_id: str) -> LinkDetail:
    """The link as it is now: an end that is due is written first (with its event)."""
    link, tally = await settle(conn, clock, await _link(conn, caller, link_id))
    return LinkDetail(link, tally)


async def list_links(
    conn: AsyncConnection, clock: Clock, caller: Caller, query: LinkListQuery
) -> Page[LinkDetail]:
    """A page, newest first. An end that is due shows (``due_status``) but is written only when
    the link itself is read, paid or swept: a list reads, it does not write."""
    statuses = [status.value for status in query.status or ()]
    if LinkStatus.ACTIVE.value not in statuses and statuses:
        statuses.append(LinkStatus.ACTIVE.value)  # a due end shows as the status asked for
    found = await repository.page(
        conn, caller.application_id, statuses, before=query.cursor, limit=query.limit + 1
    )
    tallies = await repository.tallies(conn, [link.id for link in found])
    details = []
    for link in found:
        tally = tallies.get(link.id, Tally())
        shown = replace(link, status=due_status(link, tally, clock).value)
        if not query.status or shown.status in query.status:
            details.append(LinkDetail(shown, tally))
    page = page_of(found, query.limit, lambda link: link.id)
    return Page(details[: query.limit], page.next_cursor)


async def deactivate_link(
    conn: AsyncConnection, clock: Clock, caller: Caller, link_id: str, request: DeactivatePaymentLink
) -> LinkDetail:
    """ACTIVE -> DEACTIVATED; a deactivated link is answered as it is; a completed or expired
    one is refused (409 INVALID_STATE): it already takes no payment."""
    link, tally = await settle(conn, clock, await _link(conn, caller, link_id))
    if link.status == LinkStatus.DEACTIVATED:
        return LinkDetail(link, tally)
    if link.status != LinkStatus.ACTIVE:
        raise InvalidState(link.status, allowed=[LinkStatus.ACTIVE.value])
    now = clock.now()
    message = request.message
    if not await repository.move(
        conn, link.id, expected=link.status, new=LinkStatus.DEACTIVATED.value, at=now, buyer_message=message
    ):
        raise InvalidState(link.status, allowed=[LinkStatus.ACTIVE.value])
    changes = {"status": [LinkStatus.ACTIVE.value, LinkStatus.DEACTIVATED.value], "message": bool(message)}
    await record_by(conn, clock, caller, "payment_link.deactivated", (RESOURCE, link.id), changes)
    moved = replace(link, status=LinkStatus.DEACTIVATED.value, updated_at=now, buyer_message=message)
    return LinkDetail(moved, tally)


async def link_payments(
    conn: AsyncConnection, caller: Caller, link_id: str, limit: int = 50
) -> list[LinkPayment]:
    """The intents the link's page made, newest first (the dashboard's list)."""
    await _link(conn, caller, link_id)
    return await repository.payments(conn, link_id, limit)
