"""An error answer does not grow with the request: VALIDATION_ERROR lists the first few problems
and says how many more there are (docs/api.md, Errors)."""

from __future__ import annotations

import httpx

from tests.kit import Sandbox, assert_error, intent_body

LISTED = 10  # problems listed in details.errors at most (docs/api.md)
SMALL = 4096  # bytes: ten problems and the envelope fit well within it


def validation_error(answer: httpx.Response) -> dict[str, object]:
    error: dict[str, object] = assert_error(answer, 400, "VALIDATION_ERROR")
    assert len(answer.content) < SMALL, len(answer.content)
    return error


async def test_three_thousand_bad_statuses_answer_ten_problems_and_the_count_of_the_rest(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    query = "&".join(["status=X"] * 3000)
    error = validation_error(await client.get(f"/v1/payment-intents?{query}", headers=sandbox.headers))
    details = error["details"]
    assert isinstance(details, dict)
    assert len(details["errors"]) == LISTED
    assert {problem["field"] for problem in details["errors"]} == {"status"}
    assert details["more_errors"] == 3000 - LISTED
    assert str(error["message"]).startswith("status: ")


async def test_a_body_of_many_unknown_fields_answers_ten_problems_and_the_count_of_the_rest(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    unknown = {f"field_{n:04d}": n for n in range(2000)}
    answer = await client.post(
        "/v1/payment-intents", json=intent_body(sandbox, **unknown), headers=sandbox.headers
    )
    details = validation_error(answer)["details"]
    assert isinstance(details, dict)
    assert [problem["field"] for problem in details["errors"]] == [f"field_{n:04d}" for n in range(LISTED)]
    assert details["more_errors"] == 2000 - LISTED


async def test_a_long_unknown_name_is_cut_in_the_answer(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    name = "n" * 20_000
    answer = await client.post("/v1/payment-intents", json={name: 1}, headers=sandbox.headers)
    error = validation_error(answer)
    details = error["details"]
    assert isinstance(details, dict)
    fields = [problem["field"] for problem in details["errors"]]
    assert any(field.startswith("nnnn") and field.endswith("…") for field in fields), fields


async def test_a_few_problems_are_all_listed_with_none_more(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    error = validation_error(
        await client.get("/v1/payment-intents?status=X&limit=0", headers=sandbox.headers)
    )
    details = error["details"]
    assert isinstance(details, dict)
    assert sorted(problem["field"] for problem in details["errors"]) == ["limit", "status"]
    assert details["more_errors"] == 0
