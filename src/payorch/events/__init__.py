"""Events: the append-only record of every state change (the webhook outbox)."""
