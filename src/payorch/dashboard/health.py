"""Each merchant's connectors with their health now (overview and providers pages)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications import service as applications
from payorch.applications.records import MerchantAccount
from payorch.connectors import service as connectors
from payorch.connectors.records import Connector
from payorch.dashboard.web import Viewer
from payorch.providers.health import health_key


@dataclass(frozen=True, slots=True)
class ConnectorHealth:
    connector: Connector
    skipped_until: datetime | None  # None: available now


@dataclass(frozen=True, slots=True)
class MerchantProviders:
    merchant: MerchantAccount
    connectors: list[ConnectorHealth]


async def merchant_providers(conn: AsyncConnection, viewer: Viewer) -> list[MerchantProviders]:
    health = viewer.runtime.provider_health
    found = []
    for merchant in await applications.list_merchants(conn, viewer.caller.application_id):
        rows = [
            ConnectorHealth(
                connector,
                await health.skipped_until(
                    health_key(connector.provider, connector.mode.value, connector.id)
                ),
            )
            for connector in await connectors.merchant_connectors(conn, merchant.id)
        ]
        found.append(MerchantProviders(merchant, rows))
    return found
