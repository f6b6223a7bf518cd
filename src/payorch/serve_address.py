"""Where `payorch serve` listens and the URL it hands out: checkout, simulator and return URLs
follow --host and --port unless PAYORCH_PUBLIC_URL says otherwise, and a port that cannot be
taken stops the start before anything is printed or created."""

from __future__ import annotations

import ipaddress
import socket

# Addresses that mean "every interface": a browser on this machine reaches them at loopback.
_ANY = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # noqa: S104 - names it, binds nothing


def local_url(host: str, port: int) -> str:
    """The base URL a browser on this machine reaches ``host``:``port`` at."""
    shown = _ANY.get(host, host)
    try:
        if ipaddress.ip_address(shown).version == 6:
            shown = f"[{shown}]"
    except ValueError:
        pass  # a host name
    return f"http://{shown}:{port}"


def cannot_listen(host: str, port: int) -> str | None:
    """Why ``host``:``port`` cannot be listened on (in use, not this machine's), else None.

    Binds each address the server would bind as it would (SO_REUSEADDR) and lets go at once:
    the server binds a moment later, so a port taken in between still fails there."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror} (check --host)"
    for family, kind, proto, _name, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                return (
                    f"cannot listen on {host}:{port}: {exc.strerror}"
                    " (is another service on that port? choose another with --port)"
                )
    return None
