"""API keys: their format, hashing, and authentication of each request."""
