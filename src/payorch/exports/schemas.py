"""The query of an export and what it can be asked for."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from payorch.activity.schemas import WhoWhatFilters
from payorch.http.listing import Instant, NoQuery

ExportFormat = Literal["csv", "jsonl"]


class ExportKind(StrEnum):
    PAYMENTS = "payments"
    REFUNDS = "refunds"
    DISPUTES = "disputes"
    BALANCES = "balances"
    ACTIVITY = "activity"
    PAYMENT_LINKS = "payment_links"


class ExportQuery(NoQuery):
    """A time range, read as the lists read `from` and `to` (payorch.http.listing.Instant), and
    the format. Both bounds are required: an export is of a range, never of everything. As in the
    lists, `to` at or before `from` is an empty range (a header alone), not an error: the document
    cannot say that one parameter must follow another, so refusing it would refuse what it
    admits."""

    from_: Annotated[
        Instant,
        Field(
            alias="from",
            description="At or after; a date (UTC midnight) or an ISO 8601 timestamp.",
        ),
    ]
    to: Annotated[
        Instant,
        Field(description="Before (exclusive); a date or an ISO 8601 timestamp."),
    ]
    format: Annotated[
        ExportFormat,
        Field(description="csv (RFC 4180, UTF-8, a header row) or jsonl (one JSON object a line)."),
    ] = "csv"


class ActivityExportQuery(ExportQuery, WhoWhatFilters):
    """The activity export: the range (on the entries' `at`) and the format, and the filters of
    GET /v1/admin/activity."""
