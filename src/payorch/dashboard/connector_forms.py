"""The providers page's connector forms (add; change mode, enabled, priority; set credentials;
remove) read into the connectors service's own request models, and what the service refuses
kept per field so the page shows each message beside the field it concerns.

The service does every check (modes per environment, credential fields, duplicates, used
connectors); this module only reads forms and sorts the answers. Credentials are write-only:
a refused form comes back with every secret field empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from payorch.connectors.schemas import CreateConnector, UpdateConnector
from payorch.connectors.service import check_mode_allowed
from payorch.errors import (
    ApiError,
    ConnectorConfigAlreadyExists,
    Forbidden,
    ValidationFailed,
    validator_message,
)
from payorch.providers.base import Mode
from payorch.providers.registry import REGISTRATIONS, registration_of


@dataclass(frozen=True, slots=True)
class CredentialField:
    """One credential field as the provider names and describes it (never its value)."""

    name: str
    help: str
    choices: tuple[str, ...] = ()  # a setting's values (a select), its default first; else a secret


@dataclass(frozen=True, slots=True)
class ProviderForm:
    provider: str
    display_name: str
    fields: tuple[CredentialField, ...]

    @property
    def error_fields(self) -> tuple[str, ...]:
        """How the service names these fields in its errors."""
        return tuple(f"credentials.{f.name}" for f in self.fields)


def _fields(provider: str) -> tuple[CredentialField, ...]:
    model_fields = registration_of(provider).credentials.model_fields
    return tuple(_field(name, f) for name, f in model_fields.items())


def _field(name: str, info: FieldInfo) -> CredentialField:
    """A Literal is a setting (provider A's ``capture``): its values, the default first; any
    other field is write-only, typed into a password input."""
    if get_origin(info.annotation) is not Literal:
        return CredentialField(name, info.description or "")
    values = tuple(str(v) for v in get_args(info.annotation))
    if not info.is_required():
        values = (str(info.default), *(v for v in values if v != info.default))
    return CredentialField(name, info.description or "", choices=values)


PROVIDER_FORMS = {
    r.provider_id: ProviderForm(r.provider_id, r.display_name, _fields(r.provider_id)) for r in REGISTRATIONS
}


def allowed_modes(environment: str) -> list[str]:
    """The modes the service allows this application's environment, in the API's order."""
    modes = []
    for mode in Mode:
        try:
            check_mode_allowed(environment, mode)
        except Forbidden:
            continue
        modes.append(mode.value)
    return modes


@dataclass
class Refusal:
    """One refused form: ``form`` names it (e.g. ``settings-cfg_...``), ``errors`` maps a field
    ('' for the form as a whole) to the service's message, ``typed`` keeps what was typed except
    secrets."""

    form: str
    errors: dict[str, str]
    status: int
    typed: dict[str, str] = field(default_factory=dict)
    where: str = ""  # the id the page's summary links to, when not the form's own (see anchor)

    @property
    def anchor(self) -> str:
        """The id of the element holding the form: the add form itself, or the connector's card."""
        if self.where:
            return self.where
        return self.form if self.form.startswith("add-") else self.form.partition("-")[2]

    @property
    def messages(self) -> list[str]:
        """Every message, for the summary at the top of the page."""
        return self.general(self.form, ())

    def error(self, form: str, name: str) -> str | None:
        return self.errors.get(name) if form == self.form else None

    def general(self, form: str, shown: tuple[str, ...]) -> list[str]:
        """The messages about no field this form shows, said at its top."""
        if form != self.form:
            return []
        errors = self.errors.items()
        said = {name.removeprefix("credentials."): text for name, text in errors if name not in shown}
        return [text if name in ("", "credentials") else f"{name}: {text}" for name, text in said.items()]


def refusal(form: str, exc: Exception, typed: Mapping[str, str] | None = None) -> Refusal:
    """The service's (or its request model's) refusal, sorted by field."""
    if isinstance(exc, ValidationError):
        errors = {".".join(str(p) for p in e["loc"]): validator_message(e["msg"]) for e in exc.errors()}
        return Refusal(form, errors, 400, dict(typed or {}))
    if not isinstance(exc, ApiError):
        raise exc
    if isinstance(exc, ValidationFailed):
        listed = exc.details.get("errors", [])
        errors = {str(e["field"]): str(e["message"]) for e in listed} or {"": exc.message}
    elif isinstance(exc, Forbidden):
        errors = {"mode": exc.message}
    elif isinstance(exc, ConnectorConfigAlreadyExists):
        errors = {"provider": exc.message}
    else:
        errors = {"": exc.message}
    return Refusal(form, errors, exc.status, dict(typed or {}))


def whole_number(text: str, name: str = "priority") -> int:
    # ASCII digits only: str.isdigit() also takes '²', which int() refuses.
    if not (text.isascii() and text.isdigit()):
        raise ValidationFailed.field(name, "must be a whole number such as 1")
    return int(text)


def given_credentials(provider: str, form: Mapping[str, str]) -> dict[str, str]:
    """The provider's credential fields that were filled in (a blank one is the service's to
    name: 'Field required.'); empty when none were."""
    known = PROVIDER_FORMS.get(provider)
    fields = known.fields if known is not None else ()  # an unknown provider: the service says so
    return {f.name: form[f.name] for f in fields if form.get(f.name)}


def create_request(form: Mapping[str, str]) -> CreateConnector:
    provider = form.get("provider", "")
    credentials = given_credentials(provider, form)
    return CreateConnector.model_validate(
        {
            "provider": provider,
            "mode": form.get("mode", ""),
            "enabled": form.get("enabled") == "on",
            "priority": whole_number(form.get("priority", "")),
            "credentials": credentials or None,
        }
    )


def settings_request(form: Mapping[str, str]) -> UpdateConnector:
    """Mode (when the form sends one), enabled and priority."""
    values: dict[str, object] = {
        "priority": whole_number(form.get("priority", "")),
        "enabled": form.get("enabled") == "on",
    }
    if form.get("mode"):
        values["mode"] = form["mode"]
    return UpdateConnector.model_validate(values)


def credentials_request(provider: str, form: Mapping[str, str]) -> UpdateConnector:
    """New credentials replace all of the old ones; a form with none filled in is refused
    (an empty form is not a way to clear them)."""
    credentials = given_credentials(provider, form)
    if not credentials:
        names = ", ".join(f.name for f in PROVIDER_FORMS[provider].fields)
        raise ValidationFailed.field("credentials", f"fill in {names}")
    return UpdateConnector.model_validate({"credentials": credentials})
