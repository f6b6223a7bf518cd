"""Payment links: a page a buyer opens to pay an amount an operator set (docs/payment-links.md)."""
