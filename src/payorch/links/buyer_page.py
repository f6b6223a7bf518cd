"""The buyer's page of a payment link, at the link's ``url`` (/pay/{id}): public, no key.

- GET shows the merchant, the description and the amount in the buyer's language; it creates
  nothing (an end that is due, expiry or completion, is written as on any read). A link that
  is completed, expired or deactivated answers 410 with a page that says so in words.
- POST ("Pay") checks the form's CSRF token (the double submit of a cookie, as the dashboard's
  forms before a session), then the rate limits per link and per client address
  (payorch.ratelimit), then creates the intent, carrying ``payment_link_id``, and its checkout
  through the merchant's routing, and sends the buyer to the provider's page.
- GET /pay/{id}/done is the intent's return_url: paid or not, read from the intent (the query
  string only names it), or a redirect to the link's after_payment_url.
"""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.checkouts import service as checkouts
from payorch.checkouts.cancel import cancel_intent
from payorch.checkouts.schemas import CheckoutAction, CheckoutRequestBody, CheckoutResponse
from payorch.errors import ApiError, InternalError
from payorch.http.deps import runtime_of
from payorch.intents import service as intents
from payorch.intents.schemas import CreatePaymentIntent
from payorch.intents.states import IntentStatus
from payorch.links import repository, slots
from payorch.links.buyer_forms import FormToken, language, posted
from payorch.links.buyer_render import page, secured, stylesheet
from payorch.links.buyer_text import WORDS, amount_in, date_in
from payorch.links.records import PAID, LinkStatus, PaymentLink
from payorch.links.settle import settle
from payorch.ratelimit.limiter import client_address
from payorch.runtime import Runtime

router = APIRouter(prefix="/pay", include_in_schema=False)

TOKEN = FormToken("payorch_pay", "/pay")  # the Pay form's token, double submitted (no session here)
LINK_CALLER = "payment_link"  # the credential id of the intents a link's page makes
_WAITING = (IntentStatus.CREATED, IntentStatus.REQUIRES_ACTION, IntentStatus.PROCESSING)


async def _open(runtime: Runtime, link_id: str) -> tuple[PaymentLink, str] | None:
    """The link as it is now (its due end written) and its merchant's name; None if unknown."""
    async with runtime.phases.transaction() as conn:
        link = await repository.get_any(conn, link_id)
        if link is None:
            return None
        link, _ = await settle(conn, runtime.clock, link)
        merchants = await applications.list_merchants(conn, link.application_id)
    name = next((m.name for m in merchants if m.id == link.merchant_account_id), "")
    return link, name


def _not_found(lang: str) -> Response:
    t = WORDS[lang]
    return _message(lang, 404, t["ended"], t["not_found"])


def _ended(link: PaymentLink, merchant: str, lang: str) -> Response:
    """410: the link takes no payment, said in words."""
    t = WORDS[lang]
    when = date_in(lang, link.expires_at, link.currency) if link.expires_at else ""
    seller = link.buyer_message if link.status == LinkStatus.DEACTIVATED else None
    return _message(lang, 410, t["ended"], t[link.status].format(date=when), merchant, seller_message=seller)


@router.get("/assets/pay.css")
async def pay_css() -> Response:
    return stylesheet()


@router.get("/{link_id}")
async def link_page(link_id: str, request: Request) -> Response:
    lang = language(request)
    opened = await _open(runtime_of(request), link_id)
    if opened is None:
        return _not_found(lang)
    link, merchant = opened
    if link.status != LinkStatus.ACTIVE:
        return _ended(link, merchant, lang)
    t = WORDS[lang]
    amount = amount_in(lang, link.amount, link.currency)
    token = TOKEN.current(request)
    until = date_in(lang, link.expires_at, link.currency) if link.expires_at else ""
    context: dict[str, object] = {
        "heading": t["title"].format(merchant=merchant),
        "merchant": merchant,
        "description": link.description,
        "amount": amount,
        "pay": t["pay"].format(amount=amount),
        "until": t["until"].format(date=until) if until else "",
        "link_id": link.id,
        "csrf": token,
    }
    return TOKEN.keep(page("pay.html", lang, context), token, runtime_of(request).settings.public_url)


def _message(
    lang: str, status: int, heading: str, message: str, merchant: str = "", **more: object
) -> Response:
    context = {"heading": heading, "merchant": merchant, "message": message, **more}
    return page("pay_message.html", lang, context, status=status)


@router.post("/{link_id}")
async def pay(link_id: str, request: Request) -> Response:
    runtime = runtime_of(request)
    form, lang = await posted(request)
    t = WORDS[lang]
    if not TOKEN.matches(request, form):
        return _message(lang, 403, t["busy_title"], t["expired_form"], again=True, link_id=link_id)
    decision = await runtime.rate_limiter.hit_link_pay(link_id, client_address(request.scope))
    if not decision.allowed:
        busy = _message(lang, 429, t["busy_title"], t["busy"])
        busy.headers["Retry-After"] = str(decision.reset_seconds)
        return busy
    opened = await _open(runtime, link_id)
    if opened is None:
        return _not_found(lang)
    link, merchant = opened
    if link.status != LinkStatus.ACTIVE:
        return _ended(link, merchant, lang)
    amount = amount_in(lang, link.amount, link.currency)
    try:
        action = await _checkout(runtime, link, lang)
    except ApiError:
        text = t["unpaid"].format(amount=amount)
        return _message(lang, 503, t["unpaid_title"], text, merchant, again=True, link_id=link.id)
    if action is None:  # no slot: ended meanwhile, or every slot held by a buyer paying now
        reopened = await _open(runtime, link_id)
        if reopened is not None and reopened[0].status != LinkStatus.ACTIVE:
            return _ended(reopened[0], merchant, lang)
        taken = _message(lang, 409, t["taken_title"], t["taken"], merchant, again=True, link_id=link.id)
        taken.headers["Retry-After"] = str(runtime.settings.checkout_ttl_seconds)
        return taken
    if action.method == "GET":
        return secured(RedirectResponse(action.url, status_code=303))
    context = {"heading": t["title"].format(merchant=merchant), "merchant": merchant, "amount": amount}
    return page("pay_post.html", lang, context | {"action": action}, form_to=action.url)


async def _checkout(runtime: Runtime, link: PaymentLink, lang: str) -> CheckoutAction | None:
    """The link's intent and its checkout, through the merchant's routing (``auto``); None when
    the link has no free slot (payorch.links.slots). A checkout that could not start gives its
    slot back (the intent is cancelled) before the error goes up."""
    async with runtime.phases.reading() as conn:
        application = await applications.find_application(conn, link.application_id)
    assert application is not None  # a link's application exists (foreign key)
    caller = Caller(link.application_id, application.environment, LINK_CALLER)
    base = runtime.settings.public_url.rstrip("/")
    body = CreatePaymentIntent(
        merchant_account_id=link.merchant_account_id,
        external_reference=link.external_reference or link.id,
        amount=link.amount,
        currency=link.currency,
        description=link.description,
        return_url=f"{base}/pay/{link.id}/done?lang={lang}",
        metadata=link.metadata,
    )
    ttl = timedelta(seconds=runtime.settings.checkout_ttl_seconds)
    async with runtime.phases.transaction() as conn:
        if await slots.take(conn, link.id, runtime.clock.now(), ttl) is None:
            return None
        created = await intents.create_intent(conn, runtime.clock, caller, body, payment_link_id=link.id)
    try:
        started = await checkouts.request_checkout(
            runtime, runtime.phases, caller, created.intent.id, CheckoutRequestBody(), None
        )
    except ApiError:
        await _give_back(runtime, caller, created.intent.id)
        raise
    if not isinstance(started, CheckoutResponse):  # only a request with a key gets a replay
        raise InternalError()
    return started.checkout


async def _give_back(runtime: Runtime, caller: Caller, intent_id: str) -> None:
    """Cancel the intent whose checkout did not start; if that fails too, its slot frees itself
    one checkout lifetime after it was made (payorch.links.slots)."""
    try:
        await cancel_intent(runtime, runtime.phases, caller, intent_id, "The checkout could not start.", None)
    except ApiError:
        pass


@router.get("/{link_id}/done")
async def after_payment(link_id: str, request: Request) -> Response:
    """Paid or not, from the intent: the query string names it and nothing more."""
    runtime = runtime_of(request)
    lang = language(request)
    t = WORDS[lang]
    intent_id = request.query_params.get("payment_intent_id", "")
    async with runtime.phases.reading() as conn:
        link = await repository.get_any(conn, link_id)
        intent = await intents.find_intent(conn, intent_id) if intent_id.startswith("payi_") else None
        merchants = await applications.list_merchants(conn, link.application_id) if link else []
    if link is None or intent is None or intent.payment_link_id != link.id:
        return _not_found(lang)
    if link.after_payment_url:
        return secured(RedirectResponse(link.after_payment_url, status_code=303))
    merchant = next((m.name for m in merchants if m.id == link.merchant_account_id), "")
    amount = amount_in(lang, intent.amount, intent.currency)
    if intent.status in PAID:
        text = t["paid"].format(merchant=merchant, amount=amount)
        return _message(lang, 200, t["paid_title"], text, merchant, amount=amount, intent_id=intent.id)
    if intent.status in _WAITING:
        waiting = t["waiting"].format(amount=amount)
        return _message(lang, 200, t["waiting_title"], waiting, merchant, intent_id=intent.id)
    text = t["unpaid"].format(amount=amount)
    shown = {"again": link.status == LinkStatus.ACTIVE, "link_id": link.id, "intent_id": intent.id}
    return _message(lang, 200, t["unpaid_title"], text, merchant, **shown)
