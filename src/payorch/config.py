"""Settings: every variable, its default and its meaning, in one place.

Read once at start from the environment (prefix ``PAYORCH_``). A bad value stops the start
with one line that names the variable (see ``load_settings``).
"""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import SettingsConfigDict

from payorch.config_holds import HoldSettings
from payorch.errors import validator_message

# Also the defaults of a provider-health store made from a URL alone (providers/health.py).
REDIS_TIMEOUT_SECONDS = 0.05
REDIS_RETRY_SECONDS = 5.0
REDIS_TIMEOUTS_TO_SKIP = 3
RATE_LIMIT_PATTERN = re.compile(r"^\s*(\d+)\s*/\s*(second|minute)\s*$")


class SettingsError(Exception):
    """A setting is missing or malformed; the message names the variable."""


class Settings(HoldSettings):
    model_config = SettingsConfigDict(env_prefix="PAYORCH_", extra="ignore", frozen=True)

    public_url: str = Field(
        "http://127.0.0.1:8000",
        description=(
            "Base of the URLs the service hands out (simulator pages, return handler); unset, "
            "`payorch serve` uses its own --host and --port."
        ),
    )
    secret_key: SecretStr | None = Field(
        None,
        description=(
            "Encrypts provider credentials and webhook secrets at rest. Required for PostgreSQL; "
            "for the embedded default a key file is created beside the database. A comma-separated "
            "list rotates keys: the first encrypts, all decrypt."
        ),
    )
    webhook_retry_schedule: str = Field(
        "60,300,900,3600,21600,86400",
        description="Seconds waited before webhook delivery attempts 2..7 (six numbers).",
    )
    webhook_timeout_seconds: float = Field(5, gt=0, description="A delivery must get 2xx in this.")
    webhook_attempt_retention_days: int = Field(
        30,
        gt=0,
        description=(
            "Webhook delivery attempts older than this are deleted in batches by the worker "
            "(job webhook-attempts-purge); deliveries themselves are kept."
        ),
    )
    webhook_max_in_flight: int = Field(
        256, ge=1, description="Webhook attempts one worker process runs at once."
    )
    webhook_max_in_flight_per_application: int = Field(
        128,
        ge=1,
        description=(
            "Of those, at most this many for one application's endpoints, so one application's "
            "slow endpoints leave the rest of the worker to the others."
        ),
    )
    webhook_max_in_flight_per_endpoint: int = Field(
        32,
        ge=1,
        description=(
            "Of those, at most this many for one endpoint. After an attempt to an endpoint times "
            "out, that endpoint gets one attempt at a time until one of its attempts gets a 2xx."
        ),
    )
    webhook_breaker_failures: int = Field(
        10,
        ge=1,
        description=(
            "Circuit breaker: after this many failed attempts in a row to an endpoint (over at "
            "least a minute), it gets no attempt for PAYORCH_WEBHOOK_BREAKER_SECONDS, then one "
            "at a time until a 2xx."
        ),
    )
    webhook_breaker_seconds: float = Field(
        30,
        gt=0,
        description="How long an endpoint's open circuit breaker holds its attempts; also the "
        "longest hold of an endpoint failing fast.",
    )
    webhook_disable_after_seconds: float = Field(
        432000,
        gt=0,
        description=(
            "An endpoint whose every attempt has failed for this long (default 5 days) and at "
            "least PAYORCH_WEBHOOK_DISABLE_AFTER_ATTEMPTS times is disabled automatically."
        ),
    )
    webhook_disable_after_attempts: int = Field(
        10, ge=1, description="The failed attempts that automatic disabling needs at least."
    )
    max_webhook_endpoints: int = Field(
        16,
        ge=1,
        description=(
            "Webhook endpoints per application (enabled or not; Stripe allows 16): one more is "
            "refused 409 LIMIT_EXCEEDED. One event queues at most this many deliveries, in the "
            "transaction of the request that caused it."
        ),
    )
    max_api_keys: int = Field(
        20,
        ge=1,
        description=(
            "Active (unrevoked) API keys per application: one more is refused 409 "
            "LIMIT_EXCEEDED (revoke one first). Revoked keys do not count."
        ),
    )
    reconciliation_max_queued_runs: int = Field(
        31,
        ge=1,
        description=(
            "Reconciliation runs per application queued or running at once (a month of days): "
            "one more is refused 409 LIMIT_EXCEEDED until one has finished. The worker takes "
            "runs round robin across applications whatever the backlog."
        ),
    )
    rate_limit: str = Field("100/second", description="Per application: N/second or N/minute.")
    dashboard_sign_in_rate_limit: str = Field(
        "10/minute",
        description="Dashboard sign-in attempts per client address: N/second or N/minute.",
    )
    checkout_ttl_seconds: int = Field(
        600, gt=0, description="Checkout validity; an adapter may shorten it to its token lifetime."
    )
    provider_failure_threshold: int = Field(
        3, ge=1, description="Consecutive provider failures before the provider is skipped."
    )
    provider_skip_seconds: float = Field(10, gt=0, description="How long a failing provider is skipped.")
    provider_timeout_seconds: float = Field(10, gt=0, description="One call to a provider's API.")
    routing_exploration: float = Field(
        0.05,
        ge=0,
        le=0.5,
        description="Success-rate routing: the share of intents sent first to a provider other than "
        "the best, so one that recovered is noticed.",
    )
    routing_window_seconds: int = Field(
        900, ge=10, description="Success-rate routing: the longest look back at a provider's outcomes."
    )
    routing_window_attempts: int = Field(
        200,
        ge=20,
        description="Success-rate routing: a provider's rate is over its latest this many attempts "
        "(within the window's seconds).",
    )
    idempotency_ttl_seconds: int = Field(
        86400, gt=0, description="How long an Idempotency-Key is remembered."
    )
    simulator_enabled: bool = Field(True, description="Serve the sandbox provider simulator.")
    simulator_public_rate_limit: str = Field(
        "30/minute",
        description=(
            "Writes to the simulator with the published test credentials (provider A's "
            "integration keys, provider B's public test token), per client address: N/second "
            "or N/minute. Those credentials are public, so these calls carry no real "
            "authentication."
        ),
    )
    simulator_public_retention_seconds: int = Field(
        86400,
        gt=0,
        description=(
            "Simulator rows made with the published test credentials (both providers) are "
            "deleted this long after their creation (worker job simulator-public-purge)."
        ),
    )
    sandbox_webhooks_allow_private: bool | None = Field(
        None,
        description=(
            "Whether SANDBOX webhook URLs may reach loopback and private addresses (localhost, "
            "10/8, 192.168/16, ...). Unset: on for the embedded SQLite database (a developer's "
            "own machine), off for PostgreSQL (a shared service). Link-local and cloud metadata "
            "addresses are refused whatever it says."
        ),
    )
    redis_url: str | None = Field(
        None, description="When set, rate limits and provider health are shared by all replicas."
    )
    redis_timeout_seconds: float = Field(
        REDIS_TIMEOUT_SECONDS,
        gt=0,
        description=(
            "Connect and read timeout of each Redis command (no retry): the most a hung Redis "
            "costs a request before this process skips Redis (payorch/redis_client.py)."
        ),
    )
    redis_timeouts_to_skip: int = Field(
        REDIS_TIMEOUTS_TO_SKIP,
        ge=1,
        description=(
            "Redis timeouts in a row before this process skips Redis (a refused connection skips "
            "it at once): one slow answer on a loaded host is not an outage."
        ),
    )
    redis_retry_seconds: float = Field(
        REDIS_RETRY_SECONDS,
        gt=0,
        description=(
            "After a Redis failure every use skips Redis for this long (rate limits and provider "
            "health kept per process); then one request probes it, and its success resumes sharing."
        ),
    )
    worker_metrics_port: int | None = Field(
        None,
        gt=0,
        lt=65536,
        description=(
            "Unset by default. When set, `payorch worker` serves its own Prometheus /metrics on "
            "this port, on PAYORCH_METRICS_HOST: workers answer no other HTTP (observability/exporter.py)."
        ),
    )
    # Loopback: /metrics reachable only on the host (0.0.0.0 or an interface for a remote scraper).
    metrics_host: str = Field("127.0.0.1", min_length=1, description="The worker metrics port's address.")

    header_timeout_seconds: float = Field(
        10,
        gt=0,
        description=(
            "A request's headers must be complete this long after the connection opened or the "
            "previous answer ended, however slowly bytes trickle in; then 408 (or a plain close "
            "when nothing was sent) and the connection is closed (http/server_protocol.py)."
        ),
    )
    body_timeout_seconds: float = Field(
        30,
        gt=0,
        description=(
            "A request's whole body must arrive this long after its headers; then 408 and the "
            "connection is closed."
        ),
    )
    max_connections: int | None = Field(
        None,
        ge=1,
        description=(
            "Open connections per API process; one more is answered 503 SERVICE_UNAVAILABLE and "
            "closed. Unset: the file-descriptor limit (raised to its hard limit at start) minus a "
            "tenth of it (at least 100) kept for the database, logs and provider calls."
        ),
    )
    max_concurrent_exports: int = Field(
        3,
        ge=1,
        description=(
            "Exports one application may stream at once, per API process (each --workers process "
            "counts its own); one more is refused 409 LIMIT_EXCEEDED until one has ended."
        ),
    )
    export_stall_seconds: float = Field(
        30,
        gt=0,
        description=(
            "An export whose reader takes nothing for this long (a send of the answer makes no "
            "progress) is ended: the connection is dropped and its slot freed."
        ),
    )
    max_header_bytes: int = Field(
        16384,
        ge=1024,
        description=(
            "A request's request line and headers together, in bytes; one byte more and the "
            "server answers 431 REQUEST_HEADER_FIELDS_TOO_LARGE and closes the connection, "
            "without reading the rest (http/server_protocol.py)."
        ),
    )
    max_header_count: int = Field(
        100,
        ge=10,
        description="Headers in one request; one more is answered 431 and the connection closed.",
    )
    max_url_bytes: int = Field(
        8192,
        ge=256,
        description=(
            "The request line's URL (path and query), in bytes; a longer one is answered 414 "
            "URI_TOO_LONG and the connection closed."
        ),
    )

    @field_validator("worker_metrics_port", "max_connections", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # Empty means unset (as for the exporter that reads PAYORCH_WORKER_METRICS_PORT too).
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("sandbox_webhooks_allow_private", mode="before")
    @classmethod
    def _sandbox_webhooks_allow_private(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value  # empty: unset

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("webhook_retry_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        parts = [p.strip() for p in value.split(",")]
        if len(parts) != 6 or not all(p.isdigit() for p in parts):
            raise ValueError("must be six whole numbers of seconds separated by commas")
        return value

    @field_validator(
        "rate_limit",
        "simulator_public_rate_limit",
        "dashboard_sign_in_rate_limit",
        "payment_link_pay_rate_limit",
        "payment_link_pay_address_rate_limit",
    )
    @classmethod
    def _rate_limit(cls, value: str) -> str:
        match = RATE_LIMIT_PATTERN.match(value)
        if not match or int(match.group(1)) < 1:
            raise ValueError("must look like 100/second or 6000/minute")
        return value

    @field_validator("secret_key")
    @classmethod
    def _secret_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            keys = [k.strip() for k in value.get_secret_value().split(",")]
            if any(len(k) < 32 for k in keys):
                raise ValueError("each key must be at least 32 characters")
        return value

    @cached_property
    def retry_schedule(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.webhook_retry_schedule.split(","))

    @cached_property
    def rate_limit_parts(self) -> tuple[int, str]:
        return _limit_parts(self.rate_limit)

    @cached_property
    def simulator_public_rate_limit_parts(self) -> tuple[int, str]:
        return _limit_parts(self.simulator_public_rate_limit)

    @cached_property
    def dashboard_sign_in_rate_limit_parts(self) -> tuple[int, str]:
        return _limit_parts(self.dashboard_sign_in_rate_limit)

    @cached_property
    def payment_link_pay_rate_limit_parts(self) -> tuple[int, str]:
        return _limit_parts(self.payment_link_pay_rate_limit)

    @cached_property
    def payment_link_pay_address_rate_limit_parts(self) -> tuple[int, str]:
        return _limit_parts(self.payment_link_pay_address_rate_limit)

    @property
    def sandbox_webhooks_private_allowed(self) -> bool:
        """PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE, or its default for this database."""
        if self.sandbox_webhooks_allow_private is None:
            return self.is_sqlite
        return self.sandbox_webhooks_allow_private


def _limit_parts(value: str) -> tuple[int, str]:
    match = RATE_LIMIT_PATTERN.match(value)
    assert match  # checked by the validator
    return int(match.group(1)), match.group(2)


def load_settings(**overrides: object) -> Settings:
    """Read the environment once; raise SettingsError naming the first bad variable.
    ``overrides`` stand in for variables (tests)."""
    try:
        # pydantic-settings' __init__ also takes its own typed options (_env_file, ...), so no
        # mapping of field values type-checks against it; the fields validate the values.
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "PAYORCH_" + str(first["loc"][0]).upper() if first["loc"] else "PAYORCH_*"
        raise SettingsError(f"{name}: {validator_message(first['msg'])}") from None
