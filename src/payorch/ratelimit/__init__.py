"""Per-application rate limiting (the ``limits`` package), as a pure ASGI middleware."""
