"""Who may use the simulator controls: SANDBOX applications, each on its own rows only."""

from __future__ import annotations

from payorch.auth.service import Caller
from payorch.errors import Forbidden


def require_sandbox(caller: Caller) -> None:
    if not caller.is_sandbox:
        raise Forbidden("The simulator controls are for SANDBOX applications only.")
