"""What payorch knows of one provider, declared once in the provider's own package
(``providers/<name>/registration.py``) and listed in ``providers/registry.py``.

Everything else (the API's provider enums, the connectors' credential description, MOCK
connectors, the dashboard, routing) reads this record; docs/providers.md says how to add one.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from payorch.crypto import Cipher
from payorch.providers.base import Mode, ProviderAdapter
from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.holds import HoldCalls
from payorch.providers.payment_errors import PaymentErrorMapping, by_outcome
from payorch.providers.reconciliation import ReconciliationReader

# How the buyer's browser goes to the provider's page: a form POST or a plain GET redirect.
CheckoutMethod = Literal["GET", "POST"]
# (cipher, application id) -> the credentials a MOCK connector presents to the simulator.
MockCredentials = Callable[[Cipher, str], dict[str, str]]
AUTOMATIC, MANUAL = "automatic", "manual"
# (mode, the connector's credentials: None for MOCK) -> the capture methods one connector takes,
# where that is a property of the connector rather than of the provider (provider A: whether its
# commerce code captures at once or is configured for deferred capture).
ConnectorCaptureMethods = Callable[[Mode, Mapping[str, str] | None], frozenset[str]]


def mock_secret(cipher: Cipher, message: str) -> str:
    """A secret only this deployment can derive (PAYORCH_SECRET_KEY): MOCK credentials are made
    with it per application, so none are stored and the simulator can check them."""
    return hmac.new(cipher.derive("simulator"), message.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Notifications:
    """How the provider tells payorch about payments, for whoever takes a connector live
    (docs/deployment.md, "Going live"). The URL is always the connector's own,
    ``{PUBLIC_URL}/v1/provider-notifications/{provider}/{connector_id}``."""

    # True: the URL is registered in the provider's own dashboard (and its signing secret copied
    # into the connector's credentials); False: payorch sends it with each checkout.
    registered_at_provider: bool
    events: tuple[str, ...]  # what to send to it, in the provider's own names
    # True: a notification whose signature verifies is the provider's word, the only place it
    # says an outcome (it has no call reading a payment or a modification back): the adapter
    # keeps it in ``ctx.words`` and reads it there; its captures, voids and refunds stay
    # pending until their word comes. The buyer's return is still only a hint. The conformance
    # kit tests this contract instead of the read-backs (docs/providers.md).
    authoritative: bool = False
    # The connector's credential its notifications are verified with (what the dashboard tells
    # whoever registers the URL to save the provider's secret as).
    signed_with: str = "webhook_secret"


@dataclass(frozen=True)
class HoldSupport:
    """What a provider can do with money it holds (authorized, not captured): declared by each
    provider that can hold; the API refuses what is not declared, and the conformance kit runs
    what is (docs/providers.md, "Holding and capturing")."""

    partial_capture: bool  # a capture may take less than was held (the rest is released)
    max_captures: int  # captures of one hold
    void: bool  # the hold can be released on request (else only by letting it lapse)
    window_days: int  # the hold lapses this long after authorization, unless captured

    def __post_init__(self) -> None:
        if self.max_captures < 1 or self.window_days < 1:
            raise ValueError("a hold is captured at least once, within at least a day")


@dataclass(frozen=True)
class ProviderRegistration:
    """One provider. Its id, simulator name and currencies are the adapter's own attributes
    (the adapter needs them at every call), read here rather than declared twice."""

    adapter: ProviderAdapter
    display_name: str  # what people read: "Provider A (card form)"
    checkout_method: CheckoutMethod
    credentials: type[ConnectorCredentials]  # the connector's fields, with their descriptions
    mock_credentials: MockCredentials
    mock_priority: int  # its priority among `--mock-connectors` (lower wins)
    # How reconciliation reads a day of the provider's own records (docs/reconciliation.md);
    # None: the provider is left out of reconciliation reports.
    reconciliation: ReconciliationReader | None = None
    # Its answers in payorch's payment error codes (``last_payment_error``, docs/api.md, "Why a
    # payment failed"); the default knows only the outcome.
    payment_errors: PaymentErrorMapping = by_outcome
    # None: it sends payorch nothing (the adapter's ``supports_notifications`` is False).
    notifications: Notifications | None = None
    # None: it cannot hold (every approved payment is captured at once).
    holds: HoldSupport | None = None
    # Its capture, void and hold read (None: it has none; a declared hold without them is refused).
    hold_calls: HoldCalls | None = None
    # None: every connector takes what the provider declares (automatic, and manual if it holds).
    connector_capture_methods: ConnectorCaptureMethods | None = None

    def __post_init__(self) -> None:
        if self.credentials.provider != self.adapter.provider_id:
            raise ValueError(f"{self.adapter.provider_id}: credentials model names another provider")
        if (self.notifications is not None) != self.adapter.supports_notifications:
            raise ValueError(f"{self.adapter.provider_id}: notifications disagree with the adapter")
        if self.notifications is not None and self.notifications.signed_with not in self.credential_fields:
            raise ValueError(f"{self.adapter.provider_id}: its notifications' secret is not a credential")

    @property
    def provider_id(self) -> str:
        return self.adapter.provider_id

    def capture_methods(self, mode: Mode, credentials: Mapping[str, str] | None) -> frozenset[str]:
        """The capture methods a connector of this provider in ``mode`` with ``credentials`` takes
        (routing sends it no other intent)."""
        declared = frozenset({AUTOMATIC, MANUAL}) if self.holds is not None else frozenset({AUTOMATIC})
        if self.connector_capture_methods is None:
            return declared
        return declared & self.connector_capture_methods(mode, credentials)

    @property
    def simulator_name(self) -> str:
        """The simulator's name for it: the path segment of ``{PUBLIC_URL}/simulator/<name>``."""
        return self.adapter.simulator_name

    @property
    def supported_currencies(self) -> frozenset[str]:
        return self.adapter.supported_currencies

    @property
    def credential_fields(self) -> tuple[str, ...]:
        return tuple(self.credentials.model_fields)
