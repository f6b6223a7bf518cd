"""Who acted, as the activity log names them, from the request's caller."""

from __future__ import annotations

from payorch.activity.records import Actor
from payorch.auth.service import OPERATOR, Caller


def actor_of(caller: Caller) -> Actor:
    """A person is a "user" (with their email), a key an "api_key" (its ``key_...`` id), and the
    command line's "operator" caller the "system" operator."""
    if caller.user_id is not None:
        return Actor("user", caller.user_id, caller.email)
    if caller.credential_id == OPERATOR:
        return Actor("system", OPERATOR)
    return Actor("api_key", caller.credential_id)
