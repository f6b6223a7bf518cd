"""Finance exports: payments, refunds, disputes and daily balances of a time range, streamed as
CSV or JSON lines (GET /v1/exports/{kind}; docs/exports.md)."""
