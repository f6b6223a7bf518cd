"""HTTP of the application's merchant accounts: recover a merchant id with an API key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from payorch.applications import service
from payorch.applications.schemas import MerchantAccountList, merchant_body
from payorch.http.deps import CurrentCaller, ReadConn
from payorch.http.listing import NoQuery, list_route
from payorch.http.responses import json_response

router = APIRouter(tags=["Merchant accounts"])


@list_route(
    router,
    "/v1/admin/merchant-accounts",
    model=MerchantAccountList,
    summary="List the application's merchant accounts, newest first",
)
async def list_merchant_accounts(
    caller: CurrentCaller, conn: ReadConn, query: Annotated[NoQuery, Query()]
) -> Response:
    merchants = await service.list_merchants(conn, caller.application_id)
    return json_response({"items": [merchant_body(m) for m in merchants]})
