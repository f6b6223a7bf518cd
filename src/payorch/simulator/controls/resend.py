"""What the providers' own resend controls share (simulator/<name>/controls.py): how many times
each notice goes, and in which order. Apart from schemas.py, which reads the registry that
lists those controls' providers."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from payorch.http.schemas import WHOLE_NUMBER

Copies = Annotated[int, Field(ge=1, le=5, description="Each one this many times (duplicates)."), WHOLE_NUMBER]
SendOrder = Literal["oldest_first", "newest_first"]
