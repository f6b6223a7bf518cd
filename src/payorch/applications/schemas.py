"""Response models of the application's merchant accounts."""

from __future__ import annotations

from pydantic import BaseModel

from payorch.applications.records import MerchantAccount
from payorch.clock import isoformat
from payorch.jsontypes import JsonObject


class MerchantAccountResponse(BaseModel):
    id: str
    name: str
    created_at: str


class MerchantAccountList(BaseModel):
    items: list[MerchantAccountResponse]


def merchant_body(merchant: MerchantAccount) -> JsonObject:
    return {"id": merchant.id, "name": merchant.name, "created_at": isoformat(merchant.created_at)}
