"""What the backup drills share (tests/test_backup_restore.py on PostgreSQL,
tests/test_sqlite_backup.py): a whole sandbox payment and the heads
`payorch activity verify` prints."""

from __future__ import annotations

from payorch.client import PaymentIntent, PayorchClient
from payorch.providers.registry import PROVIDER_IDS
from tests.client.buyer import pay
from tests.live import run_cli


def new_intent(client: PayorchClient, merchant: str, n: int) -> PaymentIntent:
    """The n-th intent, created with the idempotency key create-n (a replay answers the same)."""
    return client.create_payment_intent(
        merchant_account_id=merchant,
        external_reference=f"order-{n}",
        amount=1000 + n,
        currency="CLP",
        return_url="https://shop.example/return",
        idempotency_key=f"create-{n}",
    )


def paid(client: PayorchClient, merchant: str, n: int) -> str:
    """One whole sandbox payment (provider by turn); the intent's id."""
    intent = new_intent(client, merchant, n)
    checkout = client.create_checkout(intent.id, provider=PROVIDER_IDS[n % len(PROVIDER_IDS)])
    assert pay(checkout, "approve")["payment_intent_id"] == [intent.id]
    return intent.id


def verified_heads(env: dict[str, str]) -> list[str]:
    """`payorch activity verify` passed; its line per application (entries, head seq and hash)."""
    done = run_cli(["activity", "verify"], env)
    assert done.returncode == 0, done.stderr
    return sorted(line.split(": ", 1)[1] for line in done.stdout.splitlines())
