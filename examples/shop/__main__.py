"""python -m examples.shop [serve | register-webhook] (configuration: README.md)."""

from __future__ import annotations

import argparse
import logging
import sys

from payorch.client import PayorchClient

from .config import ConfigError, ShopConfig


def register_webhook(config: ShopConfig) -> int:
    """Create the payorch webhook endpoint pointing at this shop; print its secret (shown once)."""
    with PayorchClient(config.api_key, config.payorch_url) as client:
        endpoint = client.create_webhook_endpoint(url=config.webhook_url)
    print(f"# webhook endpoint {endpoint.id} -> {endpoint.url}", file=sys.stderr)
    assert endpoint.secret is not None
    print(f"export SHOP_WEBHOOK_SECRET={endpoint.secret.get_secret_value()}")
    return 0


def serve(config: ShopConfig, host: str, port: int) -> int:
    import uvicorn

    from .app import create_app

    uvicorn.run(create_app(config), host=host, port=port, log_level="info")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.shop")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("serve", help="run the shop (default)")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=3000)  # a port sandbox webhooks accept
    commands.add_parser("register-webhook", help="create the webhook endpoint, print its secret")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per API call is noise
    try:
        config = ShopConfig.from_env()
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    if args.command == "register-webhook":
        return register_webhook(config)
    return serve(config, getattr(args, "host", "127.0.0.1"), getattr(args, "port", 3000))


if __name__ == "__main__":
    raise SystemExit(main())
