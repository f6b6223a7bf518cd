"""simulator/bodies.py ``json_body``: a simulated provider's JSON request body is the object it
must be, or the provider's own refusal for "not JSON" or "not an object"; an empty body is the
provider's empty object where it takes one, and the provider's parser reads it."""

from __future__ import annotations

import json
from decimal import Decimal

import orjson
import pytest

from payorch.simulator.bodies import Failure, json_body


class Refused(Exception):
    pass


def refuse(failure: Failure) -> Exception:
    return Refused(failure)


def test_an_object_is_read_with_the_providers_parser() -> None:
    assert json_body(b'{"a": 1}', refuse) == {"a": 1}
    as_decimal = json_body(b'{"a": 1.10}', refuse, loads=lambda raw: json.loads(raw, parse_float=Decimal))
    assert as_decimal == {"a": Decimal("1.10")}


@pytest.mark.parametrize(("raw", "failure"), [(b"{", "json"), (b"\xff", "json"), (b"[1]", "object"), (b"3", "object")])
def test_anything_else_is_the_providers_refusal(raw: bytes, failure: str) -> None:
    with pytest.raises(Refused) as refused:
        json_body(raw, refuse)
    assert refused.value.args == (failure,)
    with pytest.raises(Refused):
        json_body(raw, refuse, loads=orjson.loads)


def test_an_empty_body_is_the_empty_object_only_where_the_provider_takes_one() -> None:
    assert json_body(b"  ", refuse, empty={}) == {}
    with pytest.raises(Refused) as refused:
        json_body(b"", refuse, loads=orjson.loads)
    assert refused.value.args == ("json",)
