"""The buyer page's words in the buyer's language (Spanish, Portuguese, English), and amounts
and dates written the way that language writes them in the currency's country (Babel).

The language: ``?lang=`` when the buyer chose one with the page's switch, else the best match of
the browser's Accept-Language, else English."""

from __future__ import annotations

from datetime import datetime
from typing import Final

from babel import Locale, UnknownLocaleError
from babel.core import negotiate_locale
from babel.dates import format_datetime

from payorch.amount_text import written

LANGUAGES: Final[dict[str, str]] = {"es": "Español", "pt": "Português", "en": "English"}
DEFAULT_LANGUAGE: Final = "en"

# Where a currency is at home: its amounts are written as there (es + CLP: "$15.000", pt + BRL:
# "R$ 150,00"); a currency not listed is written in the language's own way.
_HOME: Final[dict[str, str]] = {
    "ARS": "AR",
    "BOB": "BO",
    "BRL": "BR",
    "CLP": "CL",
    "COP": "CO",
    "CRC": "CR",
    "DOP": "DO",
    "EUR": "ES",
    "GTQ": "GT",
    "MXN": "MX",
    "PEN": "PE",
    "PYG": "PY",
    "USD": "US",
    "UYU": "UY",
}

WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Pay {merchant}",
        "to": "Payment to",
        "for": "For",
        "amount": "Amount",
        "pay": "Pay {amount}",
        "until": "You can pay until {date}.",
        "language": "Language",
        "secure": "You will pay on the payment provider's page; this page never asks for your card.",
        "ended": "This payment link no longer takes payments",
        "COMPLETED": "It has already been paid.",
        "EXPIRED": "It expired on {date}.",
        "DEACTIVATED": "The seller turned it off.",
        "seller_says": "The seller's message:",
        "paid_title": "Payment received",
        "paid": "{merchant} received your payment of {amount}. You can close this page.",
        "waiting_title": "Payment in process",
        "waiting": "Your payment of {amount} is being confirmed. Reload this page in a moment.",
        "unpaid_title": "Not paid",
        "unpaid": "Your payment of {amount} did not go through. Nothing was charged.",
        "again": "Try again",
        "busy_title": "Too many attempts",
        "busy": "Too many payments were started here. Wait a minute and try again.",
        "expired_form": "This form is out of date. Open the link again and press Pay.",
        "continue": "Continue to the payment page",
        "taken_title": "Someone else is paying",
        "taken": (
            "Other buyers are paying this link right now and it takes no more payments. "
            "If one of them does not finish, you can pay here again in a few minutes."
        ),
        "not_found": "There is no payment link at this address. Check the link you received.",
    },
    "es": {
        "title": "Pagar a {merchant}",
        "to": "Pago a",
        "for": "Por",
        "amount": "Monto",
        "pay": "Pagar {amount}",
        "until": "Puedes pagar hasta el {date}.",
        "language": "Idioma",
        "secure": "Pagarás en la página del proveedor de pagos; esta página nunca te pide tu tarjeta.",
        "ended": "Este link de pago ya no recibe pagos",
        "COMPLETED": "Ya fue pagado.",
        "EXPIRED": "Venció el {date}.",
        "DEACTIVATED": "El vendedor lo desactivó.",
        "seller_says": "Mensaje del vendedor:",
        "paid_title": "Pago recibido",
        "paid": "{merchant} recibió tu pago de {amount}. Puedes cerrar esta página.",
        "waiting_title": "Pago en proceso",
        "waiting": "Tu pago de {amount} se está confirmando. Vuelve a cargar esta página en un momento.",
        "unpaid_title": "No pagado",
        "unpaid": "Tu pago de {amount} no se completó. No se cobró nada.",
        "again": "Intentar de nuevo",
        "busy_title": "Demasiados intentos",
        "busy": "Se iniciaron demasiados pagos aquí. Espera un minuto e inténtalo de nuevo.",
        "expired_form": "Este formulario caducó. Abre el link de nuevo y presiona Pagar.",
        "continue": "Continuar a la página de pago",
        "taken_title": "Otra persona está pagando",
        "taken": (
            "Otras personas están pagando este link ahora y no recibe más pagos. "
            "Si alguna no termina, podrás pagar aquí de nuevo en unos minutos."
        ),
        "not_found": "No hay un link de pago en esta dirección. Revisa el link que recibiste.",
    },
    "pt": {
        "title": "Pagar a {merchant}",
        "to": "Pagamento para",
        "for": "Referente a",
        "amount": "Valor",
        "pay": "Pagar {amount}",
        "until": "Você pode pagar até {date}.",
        "language": "Idioma",
        "secure": "Você pagará na página do provedor de pagamentos; esta página nunca pede seu cartão.",
        "ended": "Este link de pagamento não recebe mais pagamentos",
        "COMPLETED": "Ele já foi pago.",
        "EXPIRED": "Ele expirou em {date}.",
        "DEACTIVATED": "O vendedor o desativou.",
        "seller_says": "Mensagem do vendedor:",
        "paid_title": "Pagamento recebido",
        "paid": "{merchant} recebeu seu pagamento de {amount}. Você pode fechar esta página.",
        "waiting_title": "Pagamento em processamento",
        "waiting": "Seu pagamento de {amount} está sendo confirmado. Recarregue esta página em instantes.",
        "unpaid_title": "Não pago",
        "unpaid": "Seu pagamento de {amount} não foi concluído. Nada foi cobrado.",
        "again": "Tentar novamente",
        "busy_title": "Tentativas demais",
        "busy": "Pagamentos demais foram iniciados aqui. Aguarde um minuto e tente novamente.",
        "expired_form": "Este formulário expirou. Abra o link novamente e toque em Pagar.",
        "continue": "Continuar para a página de pagamento",
        "taken_title": "Outra pessoa está pagando",
        "taken": (
            "Outras pessoas estão pagando este link agora e ele não recebe mais pagamentos. "
            "Se alguma não concluir, você poderá pagar aqui de novo em alguns minutos."
        ),
        "not_found": "Não há link de pagamento neste endereço. Confira o link que você recebeu.",
    },
}


def language_of(chosen: str | None, accept_language: str | None) -> str:
    """The page's language: the switch's choice, else the browser's best, else English."""
    if chosen in LANGUAGES:
        return chosen
    asked = []
    for part in (accept_language or "").split(","):
        tag, _, quality = part.strip().partition(";q=")
        try:
            weight = float(quality) if quality else 1.0
        except ValueError:
            continue
        if tag and weight > 0:
            asked.append((weight, tag.strip().replace("-", "_")))
    preferred = [tag for _, tag in sorted(asked, key=lambda pair: -pair[0])]
    found = negotiate_locale(preferred, list(LANGUAGES), sep="_") or negotiate_locale(
        [tag.split("_")[0] for tag in preferred], list(LANGUAGES), sep="_"
    )
    return found if found in LANGUAGES else DEFAULT_LANGUAGE


def locale_of(language: str, currency: str) -> Locale:
    """The language as written in the currency's home country (es_CL for CLP), when Babel knows
    that pair; else the language alone."""
    home = _HOME.get(currency)
    if home is not None:
        try:
            return Locale(language, home)
        except UnknownLocaleError:
            pass
    return Locale(language)


def amount_in(language: str, minor: int, currency: str) -> str:
    """15000 CLP in es: '$15.000'; 15000 BRL in pt: 'R$ 150,00'."""
    # written() puts a space after a code; a locale that already spaces it with U+00A0 keeps one.
    return written(minor, currency, locale_of(language, currency)).replace(" \u00a0", " ")


def date_in(language: str, moment: datetime, currency: str) -> str:
    """A date and time as the language writes it (in UTC, said so)."""
    return format_datetime(moment, "long", locale=locale_of(language, currency))
