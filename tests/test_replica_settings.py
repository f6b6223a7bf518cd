"""PAYORCH_DATABASE_REPLICA_URL is checked at start: a replica of an embedded SQLite database or a
URL that is not PostgreSQL stops the start with one line naming the variable; empty is unset."""

from __future__ import annotations

import pytest

from payorch.config import SettingsError, load_settings

POSTGRES = "postgresql://payorch@db.internal:5432/payorch"
KEY = "k" * 32


@pytest.mark.parametrize(
    ("primary", "replica", "says"),
    [
        ("sqlite:///./payorch.db", POSTGRES, "needs PAYORCH_DATABASE_URL to be PostgreSQL"),
        (POSTGRES, "mysql://replica.internal/payorch", "must be a postgresql:// URL"),
    ],
)
def test_a_replica_url_that_cannot_be_one_stops_the_start(
    primary: str, replica: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYORCH_DATABASE_REPLICA_URL", replica)
    with pytest.raises(SettingsError) as refused:
        load_settings(database_url=primary, secret_key=KEY)
    assert str(refused.value).startswith("PAYORCH_DATABASE_REPLICA_URL: ")
    assert says in str(refused.value)


def test_an_empty_replica_url_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYORCH_DATABASE_REPLICA_URL", " ")
    assert load_settings(database_url=POSTGRES, secret_key=KEY).database_replica_url is None


def test_a_replica_of_a_postgresql_primary_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYORCH_DATABASE_REPLICA_URL", POSTGRES.replace("db.", "replica."))
    monkeypatch.setenv("PAYORCH_REPLICA_MAX_LAG_SECONDS", "2.5")
    settings = load_settings(database_url=POSTGRES, secret_key=KEY)
    assert settings.database_replica_url == "postgresql://payorch@replica.internal:5432/payorch"
    assert settings.replica_max_lag_seconds == 2.5
