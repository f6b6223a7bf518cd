"""The settings of holds nobody captured (PAYORCH_HOLD_CAPTURE_DUE_SECONDS, PAYORCH_HOLD_UNCAPTURED):
a part of ``payorch.config.Settings``, which inherits them, kept apart so each file stays small
(docs/payments.md, "A hold nobody captured"). Every setting is still read, described and checked
through ``Settings``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from payorch.config_links import LinkSettings


class HoldSettings(LinkSettings):
    """When a hold is due, and what payorch does with one nobody captured."""

    hold_capture_due_seconds: int = Field(
        86400,
        gt=0,
        description=(
            "payment.capture_due is sent this long before a held payment's capture_before "
            "(worker job hold-deadlines), once per payment."
        ),
    )
    hold_uncaptured: Literal["lapse", "void"] = Field(
        "lapse",
        description=(
            "A hold nobody captured: lapse (payorch asks the provider at capture_before and the "
            "intent ends EXPIRED) or void (payorch releases it when it comes due, "
            "PAYORCH_HOLD_CAPTURE_DUE_SECONDS before capture_before: the intent ends CANCELLED)."
        ),
    )
