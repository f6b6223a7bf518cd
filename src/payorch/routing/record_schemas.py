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
    reason: Literal["currency", "capture_method", "not_enabled", "unavailable", "down", "refused"]
    detail: str


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
