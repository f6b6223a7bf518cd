"""Which currencies a provider can charge (asked of its adapter) and whether it can hold money for
a manual capture (its registration's ``holds``): here only (routing's rules)."""

from __future__ import annotations

from payorch.connectors.records import Connector
from payorch.errors import CaptureMethodNotSupported
from payorch.providers.registry import REGISTRATIONS, UnknownProvider, get_adapter, registration_of

MANUAL = "manual"


def currencies_of(provider: str) -> frozenset[str]:
    try:
        return get_adapter(provider).supported_currencies
    except UnknownProvider:
        return frozenset()


def charges(provider: str, currency: str) -> bool:
    try:
        return bool(get_adapter(provider).supports_currency(currency))
    except UnknownProvider:
        return False


def holds(provider: str) -> bool:
    """Whether ``provider`` declares holds (a manual-capture intent may go there)."""
    try:
        return registration_of(provider).holds is not None
    except UnknownProvider:
        return False


def declared(connector: Connector) -> frozenset[str]:
    """The capture methods the connector's provider declares (automatic; manual if it holds)."""
    return frozenset({"automatic", MANUAL}) if holds(connector.provider) else frozenset({"automatic"})


def can_take(provider: str, capture_method: str) -> bool:
    return capture_method != MANUAL or holds(provider)


def check_capture_method(provider: str, capture_method: str) -> None:
    """422 CAPTURE_METHOD_NOT_SUPPORTED for a manual intent naming a provider that cannot hold."""
    if not can_take(provider, capture_method):
        holding = [r.provider_id for r in REGISTRATIONS if r.holds is not None]
        raise CaptureMethodNotSupported(provider, holding)
