"""The adapter contract: one typed Protocol over every provider, in our own vocabulary.

An adapter speaks one provider's real wire protocol (its request/response shapes live in the
provider's ``wire.py`` and are converted at the edge) and answers with the result types below.
The generic code (checkouts, returns, reconciliation, refunds) never tests for a provider name.

Failures of a call are classified once, here:

    ProviderCallError
      +-- ProviderUnavailable   timeout, network error, 5xx, an answer we cannot parse.
      |                         Counts against the provider's health; a checkout may fail over.
      |                         For a commit/refund it means "outcome unknown": read it back later.
      +-- ProviderRejected      a definite answer (4xx business refusal, bad credentials...).
    InvalidNotification         a notification whose signature or shape does not verify.

Adapters are stateless singletons (``payorch.providers.registry.get_adapter``); a call's needs
travel in a ``ConnectorContext``: connector, mode, base URL, credentials (masked repr), the pooled
HTTP client, the clock, the per-call timeout, the connector's kept words (providers/words.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal, Protocol

import httpx

from payorch.clock import Clock
from payorch.providers.words import NO_WORDS, ProviderWords


class Mode(StrEnum):
    MOCK = "MOCK"  # the built-in simulator
    SANDBOX = "SANDBOX"  # the provider's test environment
    PRODUCTION = "PRODUCTION"  # the real provider


class PaymentOutcome(StrEnum):
    """Where a payment stands at the provider, as far as one call could tell."""

    AUTHORIZED = "AUTHORIZED"  # paid: the provider confirmed it (amount and currency checked)
    # Approved on the provider's page and held, the money not taken: a manual-capture checkout.
    HELD = "HELD"
    PROCESSING = "PROCESSING"  # in process at the provider, or outcome unknown (commit timed out)
    FAILED = "FAILED"  # the provider rejected the payment
    CANCELLED = "CANCELLED"  # the buyer cancelled/aborted at the provider
    EXPIRED = "EXPIRED"  # the provider reports the checkout's time ran out without payment
    NOT_PAID = "NOT_PAID"  # no payment exists (yet): the checkout can be expired or replaced
    IGNORED = "IGNORED"  # the return/notification does not belong to this checkout: change nothing


FINAL_OUTCOMES = frozenset(
    {
        PaymentOutcome.AUTHORIZED,
        PaymentOutcome.HELD,
        PaymentOutcome.FAILED,
        PaymentOutcome.CANCELLED,
        PaymentOutcome.EXPIRED,
    }
)


class ProviderRefundOutcome(StrEnum):
    SUCCEEDED = "SUCCEEDED"  # the provider applied the refund
    PENDING = "PENDING"  # accepted but not final, or unknown: read it back with read_refund
    # read_refund only: the provider shows no trace of it (safe to try again)
    NOT_APPLIED = "NOT_APPLIED"
    # read_refund only: the provider said it refused it (nothing refunded; sent again under the
    # same key it is the same refusal). A provider whose word comes by notification says so late.
    REFUSED = "REFUSED"


# --- Failures -------------------------------------------------------------------------------


class ProviderCallError(Exception):
    """Base of provider call failures. ``reason`` is safe to log and to show (never a secret)."""

    def __init__(self, reason: str, *, provider: str = "", code: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.provider = provider
        self.code = code  # the provider's own error/response code, when it gave one


class ProviderUnavailable(ProviderCallError):
    """Timeout, network error, 5xx or unparseable answer: the outcome of the call is unknown."""


class ProviderRejected(ProviderCallError):
    """A definite refusal (4xx business answer). ``status_code`` is the provider's HTTP status."""

    def __init__(
        self,
        reason: str,
        *,
        provider: str = "",
        code: str | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(reason, provider=provider, code=code)
        self.status_code = status_code


class InvalidNotification(Exception):
    """A notification that does not verify (signature, staleness, missing parts): answer 4xx."""


# --- Context --------------------------------------------------------------------------------


class Credentials(Mapping[str, str]):
    """Decrypted connector credentials. Reads like a dict; never prints a value."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values = dict(values or {})

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return "Credentials(" + ", ".join(f"{k}='***'" for k in sorted(self._values)) + ")"

    __str__ = __repr__


@dataclass(frozen=True)
class ConnectorContext:
    """Everything one adapter call needs. Built by ``payorch.providers.contexts``, which resolves
    the base URL and (MOCK) the simulator's credentials."""

    connector_id: str
    application_id: str
    provider: str
    mode: Mode
    base_url: str  # the provider API's base (MOCK: {PUBLIC_URL}/simulator/<simulator_name>)
    credentials: Credentials = field(repr=True)  # masked repr
    http: httpx.AsyncClient = field(repr=False, compare=False)
    clock: Clock = field(repr=False, compare=False)
    timeout_seconds: float = 10.0
    # The provider's words kept for this connector (providers/words.py): a provider whose signed
    # notification is its word keeps and reads them here. NO_WORDS: built without a store.
    words: ProviderWords = field(default=NO_WORDS, repr=False, compare=False)


# --- Requests and results (our vocabulary) --------------------------------------------------


@dataclass(frozen=True)
class CheckoutRequest:
    payment_intent_id: str
    checkout_id: str  # our id of this checkout attempt (unguessable: used as A's session_id)
    amount: int  # minor units
    currency: str
    description: str | None
    return_url: str  # the service's return handler for this intent
    expires_at: datetime  # what the service wants; the adapter may shorten it
    # The service's notification endpoint for this connector (providers that notify).
    notification_url: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    # The shop's own order reference, for the provider's page where its protocol has room for it.
    external_reference: str | None = None
    # manual: ask the provider to hold the money (its answer is HELD), else it is taken at once.
    capture_method: str = "automatic"


@dataclass(frozen=True)
class CheckoutSession:
    """Where to send the buyer, and what to keep to confirm the result later."""

    url: str
    method: Literal["POST", "GET"]
    fields: dict[str, str]  # hidden form fields for POST ({token_ws}); {} for GET
    provider_reference: str  # A: token; B: preference id
    expires_at: datetime  # min(requested, provider's own lifetime)
    # Opaque to the service: stored with the checkout and handed back in CheckoutRef.
    provider_data: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckoutRef:
    """A checkout as stored by the service, given back to the adapter to confirm/read/cancel it."""

    payment_intent_id: str
    checkout_id: str
    provider_reference: str
    amount: int
    currency: str
    provider_data: Mapping[str, str] = field(default_factory=dict)
    # The buyer came back through its return, as the provider confirmed (docs/providers.md).
    buyer_returned: bool = False


@dataclass(frozen=True)
class PaymentResult:
    outcome: PaymentOutcome
    provider_payment_reference: str | None = None  # A: token; B: payment id
    authorization_code: str | None = None
    amount: int | None = None  # minor units, as the provider reported it
    currency: str | None = None
    authorized_at: datetime | None = None
    reason: str | None = None  # why FAILED/CANCELLED/EXPIRED/IGNORED/PROCESSING; safe to show
    capture_before: datetime | None = None  # HELD: the hold lapses then (None: not said)
    # Non-secret provider facts worth keeping (status, response code, card last 4...).
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def is_final(self) -> bool:
        return self.outcome in FINAL_OUTCOMES


@dataclass(frozen=True)
class RefundRequest:
    refund_id: str  # our id (rfd_...): B's X-Idempotency-Key, so a retry never refunds twice
    provider_payment_reference: str  # payments.provider_reference (A token, B payment id)
    amount: int  # this refund, minor units
    currency: str
    payment_amount: int  # what was authorized
    refunded_before: int  # refunded by earlier successful refunds (to read an unknown outcome back)


@dataclass(frozen=True)
class ProviderRefundResult:
    outcome: ProviderRefundOutcome
    amount: int
    provider_refund_reference: str | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IncomingNotification:
    """A provider notification exactly as received (headers lower- or any-case)."""

    headers: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes


class DisputeState(StrEnum):
    """What the provider's payment says about a dispute after the payment (payments/disputes.py)."""

    OPEN = "OPEN"  # a chargeback or mediation is under way
    WON = "WON"  # it ended in the merchant's favour
    LOST = "LOST"  # it ended in the buyer's favour
    CLEARED = "CLEARED"  # plainly paid again: ends an open dispute as WON
    REVERSED = "REVERSED"  # refunded by the provider: ends an open dispute as LOST


@dataclass(frozen=True)
class DisputeObservation:
    """One read of the provider, with where it stands in the provider's own order: an older
    read applied after a newer one changes nothing (payments/disputes.py)."""

    state: DisputeState
    kind: str | None = None  # chargeback | mediation (None for CLEARED / REVERSED)
    provider_status: str | None = None  # the provider's status and detail, for the event
    reference: str | None = None  # the provider's own id of the dispute (None: it has none)
    # The provider's time of the read state (or, with a reference, of the opening; None: none).
    observed_at: datetime | None = None
    # Its place in the dispute's life where time does not order reads (0 first; None: current).
    rank: int | None = None


@dataclass(frozen=True)
class NotificationRef:
    """A verified notification: which payment to confirm by reading (the body proves nothing)."""

    provider_payment_reference: str | None  # None: a topic we do not act on (answer 200, ignore)
    payment_intent_id: str | None = None  # the intent it claims to concern (read from the provider)
    topic: str | None = None
    # What the payment, as read from the provider, says about a dispute (None: nothing).
    dispute: DisputeObservation | None = None
    # The payment the verification already read, judged for the checkout as read_status would
    # (called with the checkout's lease held). None: the caller calls read_status.
    confirm: Callable[[ConnectorContext, CheckoutRef], Awaitable[PaymentResult]] | None = None
    # About a hold (captured, released, lapsed): payorch reads the hold and settles a payment it
    # still holds (payments/hold_job.py).
    hold: bool = False
    # About a refund: its PENDING refunds are read back now (payments/refunds.py, ``resolve``).
    refund: bool = False
    # A payment on ``checkout_id`` (our checkout the provider names) that cannot be stopped at
    # the provider first: if payorch stopped that checkout (replaced it, or closed it without this
    # payment), ``give_back`` returns the payment (checkouts/returns.py). None: nothing to give.
    checkout_id: str | None = None
    give_back: Callable[[ConnectorContext], Awaitable[None]] | None = None
    # The other items of the same notification, each acted on as its own.
    more: tuple[NotificationRef, ...] = ()
    # Its word's issuer code, kept on a payment authorized without one (the return came first).
    authorization_code: str | None = None


# --- What every adapter answers the same way from its class attributes ----------------------


class AdapterIdentity:
    """``supports_currency`` and ``base_url`` of the Protocol below, for an adapter that declares
    ``provider_id``, ``simulator_name``, ``supported_currencies`` and its provider's own base URLs."""

    provider_id: str
    simulator_name: str
    supported_currencies: frozenset[str]
    provider_urls: Mapping[Mode, str]  # SANDBOX and PRODUCTION

    def supports_currency(self, currency: str) -> bool:
        return currency in self.supported_currencies

    def takes_currency(self, currency: str) -> None:
        """A checkout in a currency the provider does not take is refused before any call."""
        if not self.supports_currency(currency):
            raise ProviderRejected(f"unknown currency {currency}", provider=self.provider_id)

    def base_url(self, mode: Mode, public_url: str) -> str:
        if mode is Mode.MOCK:
            return public_url.rstrip("/") + "/simulator/" + self.simulator_name
        return self.provider_urls[mode]


# --- The Protocol ---------------------------------------------------------------------------


class ProviderAdapter(Protocol):
    provider_id: str
    simulator_name: str  # the simulator's name for it: {PUBLIC_URL}/simulator/<name>
    supports_notifications: bool
    # Currencies it can charge in (routing skips the provider for others).
    supported_currencies: frozenset[str]
    # Whether the consumer's return URL gets ``status`` too (docs/api.md: provider B does).
    adds_status_to_return: bool

    def supports_currency(self, currency: str) -> bool:
        """``currency in supported_currencies``."""
        ...

    def base_url(self, mode: Mode, public_url: str) -> str:
        """The provider API's base URL in ``mode``."""
        ...

    async def create_checkout(self, ctx: ConnectorContext, request: CheckoutRequest) -> CheckoutSession:
        """Create the provider-side checkout. Raises ProviderUnavailable / ProviderRejected."""
        ...

    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        """Confirm a buyer's return server-side (``params``: the return's query/form fields).

        Never trusts the parameters: they only say which provider call to make. A return that
        does not belong to ``checkout`` answers IGNORED without calling the provider; any other
        shape (abort, timeout, error, "no payment" included) asks the provider, and only the
        provider's answer may end the checkout. A commit
        whose outcome is unknown answers PROCESSING (never raises ProviderUnavailable for it);
        other unavailability raises ProviderUnavailable."""
        ...

    async def read_status(
        self, ctx: ConnectorContext, checkout: CheckoutRef, *, payment_reference: str | None = None
    ) -> PaymentResult:
        """The provider's current view of ``checkout`` (reconciliation, expiry, notifications).
        NOT_PAID when no payment exists yet. ``payment_reference`` (B: a payment id from a
        notification) is a hint; the answer is still checked against the checkout."""
        ...

    def status_lifetime(self) -> timedelta | None:
        """How long after a checkout's creation the provider still answers about it (None:
        always). Reconciliation stops asking after it (docs/checkout.md, "Background work")."""
        ...

    async def cancel_checkout(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        """Stop a checkout that is being replaced or expired. NOT_PAID means the provider
        confirms nothing started, and (where the provider allows it) the checkout can no longer
        be paid; any other outcome means it must not be replaced."""
        ...

    async def refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        """Refund. ProviderRejected: definite refusal (``reason``, ``code``).
        ProviderUnavailable: outcome unknown -> ``read_refund`` later (never blindly retry:
        provider A's refunds are not idempotent)."""
        ...

    async def read_refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        """Read back a refund whose outcome was unknown: SUCCEEDED, PENDING or NOT_APPLIED."""
        ...

    async def parse_notification(
        self, ctx: ConnectorContext, notification: IncomingNotification
    ) -> NotificationRef:
        """Verify a notification (raises InvalidNotification) and say which payment to read."""
        ...
