"""TOTP codes as a person's app shows them, each typed once: the service refuses a code already
used (a code is good once, RFC 6238 section 5.2), so a test that signs the same person in twice
within 30 seconds types the next step's code, as a person would wait for the next one."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pyotp

_LAST_STEP: dict[str, int] = {}  # secret -> the last step whose code a test typed


def next_code(secret: str, now: datetime) -> str | None:
    """The code of the first step, of ``now``'s and the next (the service accepts a step either
    side), later than the last one typed for ``secret``; None when both were typed."""
    generator = pyotp.TOTP(secret.replace(" ", ""))
    step = generator.timecode(now)
    for candidate in (step, step + 1):
        if candidate > _LAST_STEP.get(secret, -1):
            _LAST_STEP[secret] = candidate
            return generator.generate_otp(candidate)
    return None


def code_at(secret: str, now: datetime) -> str:
    """The next unused code at ``now`` (a test's clock, frozen or not)."""
    code = next_code(secret, now)
    assert code is not None, "two codes of this moment were used: use a recovery code, or move the clock"
    return code


async def fresh_code(secret: str) -> str:
    """The next unused code by the wall clock, waiting for the next 30-second step if needed
    (a browser test against a live server)."""
    while (code := next_code(secret, datetime.now(UTC))) is None:
        await asyncio.sleep(30 - time.time() % 30 + 0.1)
    return code
