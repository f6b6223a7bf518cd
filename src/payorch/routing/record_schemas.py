"""The routing record's model for the OpenAPI document (record.py builds it; the checkout, the
intent and the dry run show it). Apart from schemas.py so that intents may import it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ScoreResponse(BaseModel):
    rate: float | None = Field(description="Authorization rate in the window, 0 to 1; null: no data yet.")
    attempts: int


class CandidateResponse(BaseModel):
    provider: str
    priority: int = Field(description="The connector's priority.")
    weight: int | None = Field(description="Its share of a split, in percent; null otherwise.")
    score: ScoreResponse | None = Field(description="The success-rate strategy's; null otherwise.")


class SkippedResponse(BaseModel):
    provider: str
    reason: Literal["currency", "capture_method", "not_enabled", "unavailable", "down", "refused", "declined"]
    detail: str


class AttemptResponse(BaseModel):
    attempt: int = Field(description="From 1, in the order the checkouts were started.")
    provider: str
    checkout_id: str
    why: str = Field(description="Why this provider was chosen, in words.")
    started_at: str
    result: Literal["declined", "replaced"] | None = Field(
        description="declined: the provider declined (code); replaced: a newer checkout took its "
        "place unused; null: the current checkout, or the one that ended the intent."
    )
    code: str | None = Field(description="A decline's payorch code (last_payment_error.code).")
    provider_code: str | None = Field(description="A decline's code in the provider's own terms.")
    retryable: bool | None = Field(description="A decline's: worth another try at another provider.")


class RoutingRecordResponse(BaseModel):
    """Why a checkout went where it went."""

    strategy: Literal["explicit", "priority", "rule", "split", "success_rate"]
    rule: str | None = Field(description="The rule that matched; null when none did.")
    version: int | None = Field(description="The active routing version; null when none was ever saved.")
    candidates: list[CandidateResponse] = Field(description="In the order they were (or would be) tried.")
    skipped: list[SkippedResponse]
    chosen: str | None = Field(
        description="The provider that took the checkout; null in a dry run none could."
    )
    fallback: Literal["priority"] | None = Field(
        description="`priority` when the success-rate strategy had nothing to rank by; else null."
    )
    attempts: list[AttemptResponse] = Field(
        [],
        description="Every checkout of the intent, oldest first, and why each provider was chosen "
        "(the intent's record; the checkout response's and dry run's carry none).",
    )
