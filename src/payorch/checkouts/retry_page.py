"""The buyer's second-chance page, /checkout-retry/{payment_intent_id}: public, no key, drawn like
the payment link pages (payorch.links.buyer_render) in the buyer's language.

- GET: "Your payment was declined by X. You can try again with Y." and one button, while the
  intent holds an offer (checkouts/retry_offer.py); otherwise a 303 to the shop's return_url,
  which reads the intent as always. An offer past its end (checkouts/offer_expiry.py): 410, in words.
- POST (the button): the form's CSRF token is double submitted with a cookie (no session here,
  as the link pages), and names the declined checkout, so a stale page starts nothing; the new
  checkout is keyed by that checkout (one checkout for a double click); then the buyer goes to
  the provider's page (a POST form for a provider that takes one). A press after the offer's
  end, or one the expiry job beat to the intent's lock, starts nothing: 410, in words.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from payorch.checkouts.offer_expiry import offer_ended
from payorch.checkouts.retry_offer import offered, start_retry, started_after
from payorch.checkouts.retry_text import RETRY_WORDS
from payorch.checkouts.returns import RETRY_PATH, with_query
from payorch.errors import ApiError
from payorch.http.deps import runtime_of
from payorch.intents.records import PaymentIntent
from payorch.links.buyer_forms import FormToken, language, posted
from payorch.links.buyer_render import page, secured
from payorch.links.buyer_text import amount_in

PATH = RETRY_PATH
router = APIRouter(prefix=PATH, include_in_schema=False)
TOKEN = FormToken("payorch_retry", PATH)


def _to_shop(intent: PaymentIntent) -> Response:
    """The shop's return_url, as a return would send the buyer (the shop reads the intent)."""
    url = with_query(intent.return_url, {"payment_intent_id": intent.id})
    return secured(RedirectResponse(url, status_code=303))


def _ended(lang: str, intent: PaymentIntent) -> Response:
    """410: the offer's time ran out (the intent ends, or ended, FAILED); nothing was started."""
    w = RETRY_WORDS[lang]
    back = with_query(intent.return_url, {"payment_intent_id": intent.id})
    return _message(lang, 410, w["gone_title"], w["ended"], back)


def _message(lang: str, status: int, heading: str, message: str, back_url: str = "") -> Response:
    context: dict[str, object] = {"heading": heading, "merchant": "", "message": message}
    context |= {"w": RETRY_WORDS[lang], "back_url": back_url}
    return page("retry_message.html", lang, context, status=status)


@router.get("/{payment_intent_id}")
async def retry_page(payment_intent_id: str, request: Request) -> Response:
    runtime = runtime_of(request)
    lang = language(request)
    w = RETRY_WORDS[lang]
    intent, offer = await offered(runtime, payment_intent_id)
    if intent is None:
        return _message(lang, 404, w["gone_title"], w["gone"])
    if offer_ended(intent) or (offer is not None and offer.over(runtime.clock.now())):
        return _ended(lang, intent)
    if offer is None or offer.next_provider is None:
        if offer is not None:  # declined, and nothing the routing allows is left now
            back = with_query(intent.return_url, {"payment_intent_id": intent.id})
            return _message(lang, 200, w["gone_title"], w["gone"], back)
        return _to_shop(intent)
    token = TOKEN.current(request)
    context: dict[str, object] = {
        "heading": w["title"],
        "merchant": offer.merchant,
        "w": w,
        "amount": amount_in(lang, intent.amount, intent.currency),
        "message": w["declined"].format(provider=offer.declined_by, next=offer.next_provider),
        "button": w["retry"].format(next=offer.next_provider),
        "intent_id": intent.id,
        "after": offer.declined_checkout_id,
        "csrf": token,
        "back_url": with_query(intent.return_url, {"payment_intent_id": intent.id}),
    }
    return TOKEN.keep(page("retry.html", lang, context), token, runtime.settings.public_url)


@router.post("/{payment_intent_id}")
async def retry(payment_intent_id: str, request: Request) -> Response:
    runtime = runtime_of(request)
    form, lang = await posted(request)
    w = RETRY_WORDS[lang]
    if not TOKEN.matches(request, form):
        return _message(lang, 403, w["title"], w["expired_form"], f"{PATH}/{payment_intent_id}?lang={lang}")
    intent, offer = await offered(runtime, payment_intent_id)
    if intent is None:
        return _message(lang, 404, w["gone_title"], w["gone"])
    if offer_ended(intent) or (offer is not None and offer.over(runtime.clock.now())):
        return _ended(lang, intent)
    after = form.get("after")
    if not isinstance(after, str):
        after = ""
    amount = amount_in(lang, intent.amount, intent.currency)
    if offer is not None and after == offer.declined_checkout_id:
        try:
            action = await start_retry(runtime, intent, after)
        except ApiError:
            now, _ = await offered(runtime, intent.id)
            if now is not None and offer_ended(now):  # the expiry job ended the offer first
                return _ended(lang, now)
            text = w["unavailable"].format(next=offer.next_provider or "")
            return _message(lang, 503, w["title"], text, f"{PATH}/{intent.id}?lang={lang}")
    else:
        # Already retried (a click after the first one finished, another tab): the checkout that
        # retry started, if it is the current one; else the page as it is now.
        started = await started_after(runtime, intent, after)
        if started is None:
            return secured(RedirectResponse(f"{PATH}/{intent.id}?lang={lang}", status_code=303))
        action = started
    if action.method == "GET":
        return secured(RedirectResponse(action.url, status_code=303))
    merchant = offer.merchant if offer is not None else ""
    context = {"heading": w["title"], "merchant": merchant, "amount": amount, "action": action}
    return page("pay_post.html", lang, context, form_to=action.url)
