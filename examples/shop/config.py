"""The shop's configuration, read once from environment variables (README.md lists them)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


class ConfigError(RuntimeError):
    pass


@dataclass(frozen=True)
class ShopConfig:
    payorch_url: str
    api_key: str = field(repr=False)
    merchant_id: str
    public_url: str  # where buyers and payorch reach the shop (return_url, webhook URL)
    webhook_secret: str | None = field(default=None, repr=False)  # None until the endpoint exists
    database: str = "shop.db"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ShopConfig:
        env = dict(os.environ if env is None else env)
        # The quickstart's names work too (docs/quickstart.md exports these).
        env.setdefault("PAYORCH_URL", env.get("PAYORCH_BASE_URL", ""))
        env.setdefault("PAYORCH_MERCHANT_ID", env.get("PAYORCH_MERCHANT_ACCOUNT_ID", ""))
        missing = [
            name
            for name in ("PAYORCH_URL", "PAYORCH_API_KEY", "PAYORCH_MERCHANT_ID", "SHOP_PUBLIC_URL")
            if not env.get(name)
        ]
        if missing:
            raise ConfigError(f"set {', '.join(missing)} (see examples/shop/README.md)")
        return cls(
            payorch_url=env["PAYORCH_URL"].rstrip("/"),
            api_key=env["PAYORCH_API_KEY"],
            merchant_id=env["PAYORCH_MERCHANT_ID"],
            public_url=env["SHOP_PUBLIC_URL"].rstrip("/"),
            webhook_secret=env.get("SHOP_WEBHOOK_SECRET") or None,
            database=env.get("SHOP_DATABASE", "shop.db"),
        )

    @property
    def webhook_url(self) -> str:
        return f"{self.public_url}/webhooks/payorch"

    def return_url(self, order_id: str) -> str:
        return f"{self.public_url}/orders/{order_id}/return"
