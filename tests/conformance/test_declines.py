"""Conformance: why a payment failed, against each provider's documented table. Every row of the
provider package's decline table (providers/<name>/decline_codes.py, docs/api.md "Why a payment
failed") is made at its simulator through the buyer's page (a test card, a cardholder name, a
bank's answer; a payment left in process then failed by the settle control), and payorch
records the row's code with the provider's own in the intent's ``last_payment_error``. A row
the simulator cannot make is named by the driver with the reason."""

from __future__ import annotations

from pathlib import Path

from payorch.providers.registration import ProviderRegistration
from tests.conformance.kit import Shop, driver_of

API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_driver_makes_every_documented_row(provider: ProviderRegistration) -> None:
    driver = driver_of(provider)
    documented = driver.documented_declines()
    assert documented, f"{provider.provider_id} documents no decline codes"
    made = [case.row for case in driver.decline_cases()]
    assert len(made) == len(set(made)), "each row is made once"
    not_made = dict(driver.declines_not_simulated)
    assert set(made) - set(documented) == set(), "cases for rows the table does not have"
    assert set(not_made) - set(documented) == set(), "reasons for rows the table does not have"
    assert set(made) & set(not_made) == set(), "a row both made and not simulated"
    missing = set(documented) - set(made) - set(not_made)
    assert not missing, f"{provider.provider_id}'s simulator makes no case for {sorted(missing)}"
    assert all(reason.strip() for reason in not_made.values())


def test_the_api_docs_example_is_a_documented_row(provider: ProviderRegistration) -> None:
    """docs/api.md's decline table gives an example code per provider: one of its table's."""
    [row] = [
        line for line in API_MD.read_text().splitlines() if line.startswith(f"| `{provider.provider_id}` |")
    ]
    example = row.rstrip(" |").rsplit("|", 1)[-1].strip().strip("`")
    codes = {documented.provider_code for documented in driver_of(provider).documented_declines().values()}
    assert example in codes, (
        f"docs/api.md names {example!r} for {provider.provider_id}: not in {sorted(codes)}"
    )


async def test_each_documented_code_is_recorded(shop: Shop) -> None:
    documented = shop.driver.documented_declines()
    for case in shop.driver.decline_cases():
        checkout = await shop.start()
        await shop.pay(checkout, case.outcome, chosen=case.chosen)
        if case.settle is not None:
            await shop.settle(checkout.intent_id, case.settle)
        intent = await shop.read(checkout.intent_id)
        error = intent["last_payment_error"]
        row = documented[case.row]
        assert error is not None, (case.row, intent["status"])
        found = (error["code"], error["provider_code"], error["provider"])
        assert found == (row.code.value, row.provider_code, shop.id), (case.row, error)
        await shop.assert_not_paid(checkout.intent_id, case.row)
