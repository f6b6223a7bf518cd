"""The second-chance page's words in the buyer's language (the payment link pages' languages,
payorch.links.buyer_text, chosen the same way)."""

from __future__ import annotations

from typing import Final

RETRY_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Your payment was declined",
        "declined": "Your payment was declined by {provider}. You can try again with {next}.",
        "charged": "Nothing was charged.",
        "retry": "Try again with {next}",
        "gone_title": "This offer has ended",
        "gone": "There is no second try to offer for this payment now.",
        "ended": "The time to try again ran out, so this payment was not completed. Nothing was charged.",
        "back": "Back to the shop",
        "expired_form": "This form is out of date. Open the page again and press the button.",
        "unavailable": "{next} cannot take the payment right now. Wait a moment and try again.",
    },
    "es": {
        "title": "Tu pago fue rechazado",
        "declined": "Tu pago fue rechazado por {provider}. Puedes intentarlo de nuevo con {next}.",
        "charged": "No se cobró nada.",
        "retry": "Intentar de nuevo con {next}",
        "gone_title": "Esta oferta terminó",
        "gone": "Ahora no hay un nuevo intento que ofrecer para este pago.",
        "ended": "Se acabó el tiempo para intentarlo de nuevo: este pago no se completó. No se cobró nada.",
        "back": "Volver a la tienda",
        "expired_form": "Este formulario caducó. Abre la página de nuevo y presiona el botón.",
        "unavailable": "{next} no puede recibir el pago ahora. Espera un momento e inténtalo de nuevo.",
    },
    "pt": {
        "title": "Seu pagamento foi recusado",
        "declined": "Seu pagamento foi recusado por {provider}. Você pode tentar novamente com {next}.",
        "charged": "Nada foi cobrado.",
        "retry": "Tentar novamente com {next}",
        "gone_title": "Esta oferta terminou",
        "gone": "Não há uma nova tentativa a oferecer para este pagamento agora.",
        "ended": "O tempo para tentar novamente acabou: este pagamento não foi concluído. Nada foi cobrado.",
        "back": "Voltar para a loja",
        "expired_form": "Este formulário expirou. Abra a página novamente e toque no botão.",
        "unavailable": "{next} não pode receber o pagamento agora. Aguarde um momento e tente novamente.",
    },
}
