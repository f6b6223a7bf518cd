"""Provider D's wire as the simulator speaks it: paths, identifiers, ``ServiceError`` bodies, requests
read; and each owner's credentials (MOCK, or the published test ones)."""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject
from payorch.simulator.credentials import credential, owner_of_key

NAME = "provider_d"
BASE = f"/simulator/{NAME}"
PAGE_PATH = BASE + "/checkoutshopper/{session_id}"  # the hosted page (``url`` of a session)
_PSP = string.ascii_uppercase + string.digits
# sessionResult: URL-safe, never '+' (the library puts it on the wire unencoded; §5.2 of the protocol).
_RESULT = string.ascii_letters + string.digits + "-_"


class SimDError(Exception):  # a refusal in Adyen's ServiceError shape (errorCode a string)
    def __init__(self, status: int, code: str, message: str, error_type: str = "validation") -> None:
        super().__init__(message)
        self.status = status
        self.body: JsonObject = {"status": status, "errorCode": code, "message": message}
        self.body.update(errorType=error_type, pspReference=new_psp())


def new_psp() -> str:  # 16 characters
    return "".join(secrets.choice(_PSP) for _ in range(16))


def new_session_id() -> str:
    return "CS" + secrets.token_hex(8).upper()


def new_session_result() -> str:
    return "X3X" + "".join(secrets.choice(_RESULT) for _ in range(40)) + "!"


def text(body: JsonObject, name: str, code: str = "100") -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise SimDError(422, code, f"Required field '{name}' is not provided.")
    return value


def amount(body: JsonObject) -> tuple[int, str]:
    """``amount`` as (value in minor units, currency)."""
    given = body.get("amount")
    value = given.get("value") if isinstance(given, dict) else None
    currency = given.get("currency") if isinstance(given, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise SimDError(422, "137", "Invalid amount specified")
    if not isinstance(currency, str) or len(currency) != 3 or not currency.isupper():
        raise SimDError(422, "138", "Invalid currency specified")
    return value, currency


PUBLIC_API_KEY = "AQE_payorch_sandbox_public_key"  # public on purpose
PUBLIC_MERCHANT_ACCOUNT = "PayorchSandboxECOM"
PUBLIC_HMAC_KEY = "7061796F7263682D73616E64626F782D7075626C69632D686D61632D6B657921"  # public on purpose


def merchant_account(cipher: Cipher, owner: str) -> str:
    return credential(cipher, NAME, owner, "merchant_account", PUBLIC_MERCHANT_ACCOUNT)


def hmac_key(cipher: Cipher, owner: str) -> str:
    return credential(cipher, NAME, owner, "hmac_key", PUBLIC_HMAC_KEY)


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    return owner_of_key(cipher, NAME, "api_key", presented.get("api_key", ""), PUBLIC_API_KEY)
