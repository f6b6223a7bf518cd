"""Provider configurations (connectors): which providers a merchant uses, in what mode."""
