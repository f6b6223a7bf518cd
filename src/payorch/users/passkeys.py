"""Passkeys (WebAuthn, with the ``webauthn`` library): registration and authentication options
for the browser's navigator.credentials calls, and the checks of what it answers. The relying
party is the service's public URL (PAYORCH_PUBLIC_URL): its host is the RP id, its origin the
only origin accepted. A challenge is kept by the caller (the dashboard keeps it in the
PASSWORD-stage session) between the options and the answer."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, parse_authentication_credential_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

RP_NAME = "payorch"


class PasskeyRefused(Exception):
    """What the browser answered does not verify (wrong challenge, origin, signature, ...)."""


@dataclass(frozen=True, slots=True)
class RelyingParty:
    rp_id: str  # the public URL's host
    origin: str  # scheme://host[:port]

    @classmethod
    def of(cls, public_url: str) -> RelyingParty:
        parts = urlsplit(public_url)
        return cls(parts.hostname or "", f"{parts.scheme}://{parts.netloc}")


@dataclass(frozen=True, slots=True)
class Options:
    """Options for the browser (JSON) and their challenge (base64url), to keep until the answer."""

    json: str
    challenge: str


@dataclass(frozen=True, slots=True)
class NewPasskey:
    credential_id: str  # base64url
    public_key: bytes  # COSE
    sign_count: int


def registration_options(party: RelyingParty, user_id: str, email: str, existing: list[str]) -> Options:
    """Options to create a passkey for ``email`` (``existing``: their passkeys' ids, not again)."""
    options = generate_registration_options(
        rp_id=party.rp_id,
        rp_name=RP_NAME,
        user_id=user_id.encode(),
        user_name=email,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in existing],
    )
    return Options(options_to_json(options), bytes_to_base64url(options.challenge))


def verify_registration(party: RelyingParty, challenge: str, answer: str) -> NewPasskey:
    """The passkey the browser created in answer to the options of ``challenge``."""
    try:
        verified = verify_registration_response(
            credential=answer,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=party.rp_id,
            expected_origin=party.origin,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError) as exc:
        raise PasskeyRefused(str(exc)) from None
    return NewPasskey(
        bytes_to_base64url(verified.credential_id), verified.credential_public_key, verified.sign_count
    )


def authentication_options(party: RelyingParty, credential_ids: list[str]) -> Options:
    """Options to sign in with one of ``credential_ids`` (the person's passkeys)."""
    options = generate_authentication_options(
        rp_id=party.rp_id,
        allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in credential_ids],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    return Options(options_to_json(options), bytes_to_base64url(options.challenge))


def answered_credential_id(answer: str) -> str:
    """The passkey id the browser's answer names (checked by verify_authentication)."""
    try:
        return parse_authentication_credential_json(answer).id
    except (WebAuthnException, ValueError) as exc:
        raise PasskeyRefused(str(exc)) from None


def verify_authentication(
    party: RelyingParty, challenge: str, answer: str, public_key: bytes, sign_count: int
) -> int:
    """Checks the browser's signature over ``challenge``; returns the passkey's new sign count."""
    try:
        verified = verify_authentication_response(
            credential=answer,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=party.rp_id,
            expected_origin=party.origin,
            credential_public_key=public_key,
            credential_current_sign_count=sign_count,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError) as exc:
        raise PasskeyRefused(str(exc)) from None
    return verified.new_sign_count
