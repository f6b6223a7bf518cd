"""Connector rules. The providers issue fills this package (endpoints, repository, schemas)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock


async def add_mock_connectors(conn: AsyncConnection, clock: Clock, merchant_account_id: str) -> None:
    """MOCK configurations for both providers: A priority 1, B priority 2.

    Not built yet: the connectors table arrives with the providers issue.
    """
    raise NotImplementedError("connectors arrive with the providers issue")
