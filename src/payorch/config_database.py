"""The database settings (PAYORCH_DATABASE_*, PAYORCH_REPLICA_*): the first part of
``payorch.config.Settings``, which inherits them; kept apart so each file stays small. Every
setting is still read, described and checked through ``Settings``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings


class DatabaseSettings(BaseSettings):
    """Where the data lives and how long payorch waits for it (see docs/deployment.md)."""

    database_url: str = Field(
        "sqlite:///./payorch.db",
        description="Embedded SQLite by default; postgresql://user@host:port/db in production.",
    )
    database_replica_url: str | None = Field(
        None,
        description=(
            "A streaming replica of the PostgreSQL primary (postgresql://...). When set, the "
            "application-wide lists and the dashboard's lists and overview read it while it is "
            "reachable and within PAYORCH_REPLICA_MAX_LAG_SECONDS; everything else reads the "
            "primary (payorch/db/replica.py)."
        ),
    )
    replica_max_lag_seconds: float = Field(
        5,
        gt=0,
        description="Lists read the primary while the replica is this far behind or more.",
    )
    replica_check_seconds: float = Field(
        1,
        ge=0,
        description=(
            "Each process measures the replica's lag this often, in the background (0: one "
            "measure after another, 50 ms apart); an unreachable replica is tried again then."
        ),
    )
    replica_timeout_seconds: float = Field(
        2,
        gt=0,
        description=(
            "The most each step on the replica may take (the wait for a pooled connection, the "
            "connect, a list's whole read, each round trip of the lag measure): a replica that "
            "stops answering costs a list this long, then the list reads the primary."
        ),
    )
    database_transaction_pooling: bool = Field(
        False,
        description=(
            "true: PAYORCH_DATABASE_URL reaches PostgreSQL through a pooler in transaction mode "
            "(PgBouncer pool_mode=transaction): no named prepared statements, every step in a "
            "transaction of its own, no LISTEN (workers poll). See docs/deployment.md, PgBouncer."
        ),
    )
    database_pool_size: int = Field(
        20,
        ge=1,
        description=(
            "PostgreSQL connections in each process's pool (API process or worker), kept open "
            "once made; an API process also opens up to 10 for intent creates (the statement "
            "lane), and up to this many on the replica. Size PostgreSQL's max_connections with "
            "it (docs/deployment.md)."
        ),
    )
    database_connect_timeout_seconds: float = Field(
        5,
        gt=0,
        description=(
            "The most a connect to PostgreSQL may take (TCP, TLS, startup); then the request "
            "answers 503 SERVICE_UNAVAILABLE (a read is tried once more first)."
        ),
    )
    database_statement_timeout_seconds: float = Field(
        5,
        gt=0,
        description=(
            "The most one round trip to PostgreSQL (a statement, its prepare, BEGIN, COMMIT) may "
            "wait for the answer; then its connection is closed and the request answers 503."
        ),
    )
    database_pool_timeout_seconds: float = Field(
        5,
        gt=0,
        description=(
            "The most a request waits for a free PostgreSQL connection of its process's pool "
            "(all PAYORCH_DATABASE_POOL_SIZE in use); then 503 SERVICE_UNAVAILABLE."
        ),
    )

    @field_validator("database_replica_url", mode="before")
    @classmethod
    def _empty_replica_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        if not value.startswith(("sqlite", "postgresql", "postgres://")):
            raise ValueError("must be a sqlite:/// or postgresql:// URL")
        return value

    @field_validator("database_replica_url")
    @classmethod
    def _database_replica_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if not value.startswith(("postgresql", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        if str(info.data.get("database_url", "")).startswith("sqlite"):
            raise ValueError("needs PAYORCH_DATABASE_URL to be PostgreSQL (its primary)")
        return value

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def sqlite_path(self) -> Path | None:
        """The database file of the embedded default (None for in-memory or PostgreSQL)."""
        from payorch.db.engine import sqlite_file

        return sqlite_file(self.database_url)
