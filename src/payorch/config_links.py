"""The settings of payment links (PAYORCH_MAX_ACTIVE_PAYMENT_LINKS, PAYORCH_PAYMENT_LINK_PAY_*):
a part of ``payorch.config.Settings``, which inherits them, kept apart so each file stays small
(docs/payment-links.md). Every setting is still read, described and checked through ``Settings``.
"""

from __future__ import annotations

from pydantic import Field

from payorch.config_access import AccessSettings


class LinkSettings(AccessSettings):
    """How many links an application keeps open, and how often a buyer's "Pay" is taken."""

    max_active_payment_links: int = Field(
        1000,
        ge=1,
        description=(
            "ACTIVE payment links per application: one more create is refused 409 "
            "LIMIT_EXCEEDED (deactivate a link first). Completed, expired and deactivated "
            "links do not count."
        ),
    )
    payment_link_pay_rate_limit: str = Field(
        "20/minute",
        description=(
            "\"Pay\" on one payment link's buyer page, from every buyer together: N/second or "
            "N/minute. Past it the page answers 429 and makes no intent."
        ),
    )
    payment_link_pay_address_rate_limit: str = Field(
        "10/minute",
        description=(
            "\"Pay\" on any payment link's buyer page per client address: N/second or N/minute."
        ),
    )
