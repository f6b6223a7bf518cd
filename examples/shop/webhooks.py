"""The webhook receiver: verify the signature on the raw body, deduplicate by event id, apply."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import PlainTextResponse

from payorch.client import WebhookVerificationError
from payorch.client.webhooks import verify

from .config import ShopConfig
from .store import Store

log = logging.getLogger("shop.webhooks")


async def receive(request: Request) -> PlainTextResponse:
    config: ShopConfig = request.app.state.config
    store: Store = request.app.state.store
    if not config.webhook_secret:
        # 503 makes payorch retry later: nothing is lost while SHOP_WEBHOOK_SECRET is being set.
        log.error("SHOP_WEBHOOK_SECRET is not set: notice refused")
        return PlainTextResponse("webhook secret not configured", status_code=503)
    raw_body = await request.body()  # the exact bytes: the signature covers them
    try:
        event = verify(raw_body, request.headers, config.webhook_secret)
    except WebhookVerificationError as error:
        log.warning("webhook refused: %s", error.reason)
        return PlainTextResponse("invalid notice", status_code=400)
    fresh = await store.record_event(event.id, event.type, event.payment_intent_id)
    log.info("webhook %s %s %s", event.id, event.type, "applied" if fresh else "duplicate")
    return PlainTextResponse("ok" if fresh else "duplicate")
