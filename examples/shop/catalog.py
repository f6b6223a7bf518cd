"""The products on sale (a real shop would read them from its database) and price formatting."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Product:
    id: str
    name: str
    description: str
    price: int  # CLP has no minor unit: 12990 is $12.990
    currency: str = "CLP"


PRODUCTS = {
    p.id: p
    for p in (
        Product("coffee", "Coffee beans, 250 g", "Medium roast from Chiapas, whole bean.", 8990),
        Product("mug", "Ceramic mug", "Hand-thrown stoneware, 350 ml.", 12990),
    )
}

# payorch chooses the provider (its routing). The others are asked of payorch at each page
# (app.py): the shop keeps no list of providers.
AUTO = "auto"
AUTO_LABEL = "Best available"


def clp(amount: int) -> str:
    """Chilean style: a dot groups thousands, no decimals ("$12.990")."""
    return "$" + f"{amount:,}".replace(",", ".")
