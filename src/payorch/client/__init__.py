"""Python client for the payorch API: sync and async, typed, retrying, with webhook verification.

    from payorch.client import PayorchClient
    with PayorchClient("pay_sb_...", base_url="http://127.0.0.1:8000") as client:
        intent = client.create_payment_intent(
            merchant_account_id="mrc_...", external_reference="order-1", amount=1500,
            currency="CLP", return_url="https://shop.example/return",
        )

See docs/client.md.
"""

from payorch.client import webhooks
from payorch.client._async import AsyncPayorchClient
from payorch.client._core import NO_RETRIES, Call, RetryPolicy
from payorch.client._sync import PayorchClient
from payorch.client._version import __version__
from payorch.client.errors import (
    AlreadyExistsError,
    ApiError,
    AuthenticationError,
    ConflictError,
    IdempotencyError,
    InvalidRequestError,
    InvalidStateError,
    NotFoundError,
    PayorchConnectionError,
    PayorchError,
    PayorchTimeoutError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    UnexpectedResponseError,
    UnprocessableError,
    WebhookVerificationError,
)
from payorch.client.models import (
    ApiCredential,
    Checkout,
    CheckoutAction,
    Connector,
    Event,
    IntentPayment,
    Page,
    Payment,
    PaymentDispute,
    PaymentIntent,
    PaymentLink,
    Refund,
    RoutingEvaluation,
    RoutingRecord,
    RoutingVersion,
    TimelineEntry,
    User,
    WebhookDelivery,
    WebhookEndpoint,
)

__all__ = [
    "NO_RETRIES",
    "AlreadyExistsError",
    "ApiCredential",
    "ApiError",
    "AsyncPayorchClient",
    "AuthenticationError",
    "Call",
    "Checkout",
    "CheckoutAction",
    "ConflictError",
    "Connector",
    "Event",
    "IdempotencyError",
    "IntentPayment",
    "InvalidRequestError",
    "InvalidStateError",
    "NotFoundError",
    "Page",
    "Payment",
    "PaymentDispute",
    "PaymentIntent",
    "PaymentLink",
    "PayorchClient",
    "PayorchConnectionError",
    "PayorchError",
    "PayorchTimeoutError",
    "PermissionDeniedError",
    "ProviderError",
    "RateLimitError",
    "Refund",
    "RetryPolicy",
    "RoutingEvaluation",
    "RoutingRecord",
    "RoutingVersion",
    "ServerError",
    "ServiceUnavailableError",
    "TimelineEntry",
    "UnexpectedResponseError",
    "UnprocessableError",
    "User",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookVerificationError",
    "webhooks",
    "__version__",
]
