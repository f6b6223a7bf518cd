"""Rows <-> records. A domain record (a frozen dataclass) names its fields after its table's
columns, so one pair of functions, driven by the record's fields, serves every repository."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Record = TypeVar("Record", bound="DataclassInstance")


class Row(Protocol):
    """A row by column name: the engine's RowMapping, or asyncpg's Record (db/prepared.py)."""

    def __getitem__(self, key: str, /) -> object: ...


@cache
def field_names(record_type: type[DataclassInstance]) -> tuple[str, ...]:
    return tuple(field.name for field in fields(record_type))


def record_of(
    record_type: type[Record],
    row: Row,
    /,
    *,
    renamed: Mapping[str, str] | None = None,
    **given: object,
) -> Record:
    """``record_type`` from a row: each field from the column of its name (``renamed``: field ->
    column), except the ``given`` ones (values the column must be turned into, e.g. an enum).
    A row may carry more columns than the record has fields (a join): they are left out."""
    columns = renamed or {}
    values = {
        name: given[name] if name in given else row[columns.get(name, name)]
        for name in field_names(record_type)
    }
    return record_type(**values)


def column_values(
    record: DataclassInstance, /, *, renamed: Mapping[str, str] | None = None
) -> dict[str, object]:
    """The record as an insert's values: each field under its column's name (``renamed``: field
    -> column); enums by value, tuples as lists and mappings as dicts (JSON columns)."""
    columns = renamed or {}
    return {
        columns.get(name, name): _column_value(getattr(record, name))
        for name in field_names(type(record))
    }


def given_values(**values: object) -> dict[str, object]:
    """An update's values: those given, None meaning "leave the column as it is"."""
    return {column: value for column, value in values.items() if value is not None}


def _column_value(value: object) -> object:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value
