"""A bug planted in a registered provider for one test (the ``test_planted_*`` modules show the
kit catching it): the registry answers the planted registration, and the kit's shop, when given,
reads its declarations from it."""

from __future__ import annotations

import pytest

from payorch.providers import registry
from payorch.providers.registration import ProviderRegistration
from tests.conformance.kit import Shop


def use_planted(monkeypatch: pytest.MonkeyPatch, planted: ProviderRegistration, shop: Shop | None = None) -> None:
    monkeypatch.setitem(registry._BY_ID, planted.provider_id, planted)
    if shop is not None:
        monkeypatch.setattr(shop, "provider", planted)
