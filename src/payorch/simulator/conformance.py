"""What the conformance kit (tests/conformance) must know of one simulated provider beyond its
registration: the shapes of its returns and notifications, which buttons its page has, how to
read its own books. Each simulator package declares it once, as ``DRIVER`` in
``simulator/<name>/conformance.py``; the kit runs every case for every registered provider
with it (docs/providers.md).

A driver forges: it writes what a browser or a caller holding the buyer's page could send, and
reads the provider's state through the simulator's own API with the MOCK credentials. It
asserts nothing; the kit does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, urlsplit

import httpx

from payorch.crypto import Cipher
from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode

# The buttons (``name="outcome"``) a simulated checkout page may offer, in the kit's words.
PageOutcome = Literal["approve", "reject", "pending", "cancel"]
PAGE_OUTCOMES: tuple[PageOutcome, ...] = ("approve", "reject", "pending", "cancel")


@dataclass(frozen=True)
class Charges:
    """The money the kit charges at one provider, declared by its driver: a currency the provider
    takes (no provider claims a currency for the kit's sake: routing would then send it real
    payments in it) and amounts in that currency's minor units. ``amount`` is a whole payment;
    ``part`` a piece of it captured or refunded on its own (a partial capture takes
    ``amount - part`` and releases ``part``; a partial refund returns ``part``)."""

    currency: str
    amount: int
    part: int

    def __post_init__(self) -> None:
        if not 0 < 2 * self.part < self.amount:
            raise ValueError("part must be more than 0 and less than half of amount")


@dataclass(frozen=True)
class Visit:
    """One checkout as the kit drove it, for the driver to forge from."""

    application_id: str
    payment_intent_id: str
    checkout_url: str  # the checkout's ``checkout.url``
    checkout_fields: Mapping[str, str]  # its ``checkout.fields`` (POST checkouts)
    # Where the provider sent the buyer back (the genuine return address), when it did.
    returned_to: str | None = None
    capture_method: str = "automatic"  # the intent's: manual asked the provider to hold

    @property
    def page_key(self) -> str:
        """The checkout URL's last path segment: the page's key, for a provider that puts it there."""
        return urlsplit(self.checkout_url).path.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Money:
    """A payment's money in the provider's own books: approved on its page and held, apart from
    taken (captured, less what was refunded)."""

    held: int
    taken: int


def query_of(url: str | None) -> dict[str, str]:
    """The fields of ``url``'s query string, blank ones kept (none without a URL)."""
    return dict(parse_qsl(urlsplit(url or "").query, keep_blank_values=True))


async def read_books(
    http: httpx.AsyncClient, path: str, *, headers: Mapping[str, str], params: Mapping[str, str] | None = None
) -> Any:
    """The simulator's JSON answer to a GET made with the MOCK connector's credentials (an error
    status fails the case: the books must be readable)."""
    response = await http.get(path, params=params, headers=headers)
    response.raise_for_status()
    return response.json()


@dataclass(frozen=True)
class ForgedReturn:
    label: str  # names the shape in a failing assertion
    method: Literal["GET", "POST"]
    params: dict[str, str]


@dataclass(frozen=True)
class ForgedNotification:
    label: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    signed: bool  # False: a shape the provider sends unsigned (only a hint of what to read)


@dataclass(frozen=True)
class Documented:
    """One row of the provider's documented decline table (``providers/<name>/decline_codes.py``):
    what payorch records in ``last_payment_error`` for it."""

    provider_code: str  # as recorded: the provider's own code
    code: PaymentErrorCode  # payorch's


@dataclass(frozen=True)
class DeclineCase:
    """How the provider's simulator is made to answer one documented row: a button of its page
    (with options picked in the page's form: a test card, a cardholder name, a bank's answer),
    then, for a payment left in process, the settle control's outcome."""

    row: str  # the key of the row in the driver's ``documented_declines``
    outcome: str  # the page's button (``name="outcome"``)
    chosen: Mapping[str, str] = field(default_factory=dict)
    settle: str | None = None


@dataclass(frozen=True)
class StatusCase:
    """One status (or combination) the provider's wire names, and its meaning for a checkout:
    ``read`` runs the provider's payment_results mapping on it (ProviderUnavailable: ask again)."""

    label: str
    read: Callable[[], PaymentResult]


Reader = Callable[..., Callable[[], PaymentResult]]  # (a status's values) -> its mapping, to run


def status_grid(read: Reader, *axes: Mapping[str, Any]) -> list[StatusCase]:
    """A case per combination of the axes' values (the first axis outermost), each read with
    ``read(*values)`` and labelled by the values' labels joined with "/"."""
    return [
        StatusCase("/".join(label for label, _ in combo), read(*(value for _, value in combo)))
        for combo in itertools.product(*(axis.items() for axis in axes))
    ]


class ConformanceDriver(Protocol):
    # What the kit charges here (test_checkout checks the provider takes its currency).
    charges: Charges
    # The PAGE_OUTCOMES its page offers (the kit checks the page against it).
    page_outcomes: frozenset[PageOutcome]
    # After a decline the buyer stays on the provider's page and may pay there again.
    decline_retries_on_page: bool

    async def returns(
        self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit, *, claims_paid: bool
    ) -> list[ForgedReturn]:
        """Every return shape the provider's browser trip can bring, filled in for ``visit``,
        each saying the buyer paid (``claims_paid``) or did not."""
        ...

    async def notifications(
        self,
        http: httpx.AsyncClient,
        cipher: Cipher,
        visit: Visit,
        *,
        claims_paid: bool,
        secret: str | None,
        now: datetime,
    ) -> list[ForgedNotification]:
        """Every notification shape naming ``visit``'s objects at the provider, claiming paid or
        not, signed at ``now`` with ``secret`` (None: the connector's own). [] when the
        provider sends none."""
        ...

    async def refunded(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> int:
        """What the provider's own books say was refunded of ``visit``'s payment (minor units)."""
        ...

    async def money(self, http: httpx.AsyncClient, cipher: Cipher, visit: Visit) -> Money:
        """What the provider's own books hold of ``visit``'s payment: held apart from taken."""
        ...

    def status_cases(self, ctx: ConnectorContext, checkout: CheckoutRef) -> list[StatusCase]:
        """Every payment status its wire names (with what changes its meaning), for ``checkout``."""
        ...

    def unknown_status(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        """The mapping run on a status its wire does not name (must be "ask again")."""
        ...

    def documented_declines(self) -> Mapping[str, Documented]:
        """Every row of the provider package's decline table (decline_codes.py), by a key."""
        ...

    def decline_cases(self) -> list[DeclineCase]:
        """How its simulator answers each documented row (the kit checks every row has one, or
        a reason in ``declines_not_simulated``)."""
        ...

    # Rows its simulator cannot answer, each with why (the kit checks they are documented rows).
    declines_not_simulated: Mapping[str, str]
