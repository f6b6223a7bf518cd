"""The spec's allowed webhook URLs, judged on the URL text and on the addresses a name resolves to.

| environment | rule |
|---|---|
| SANDBOX    | http or https; port 80, 443, 3000, 4300, 4400 or 8080; any address |
| PRODUCTION | https on port 443 only; every resolved address public (never localhost, private,
               loopback, link-local, multicast, reserved or unspecified; IPv4 or IPv6, IPv4-mapped
               and other IPv4-embedding IPv6 forms judged on the embedded IPv4) |

``vet`` returns a ``Target`` that names the addresses the connection may go to: the sender
connects to one of those (the next on a refused connection), never to a fresh resolution (no
DNS-rebinding window).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from payorch.errors import WebhookEndpointUrlNotAllowed

SANDBOX = "SANDBOX"
PRODUCTION = "PRODUCTION"
SANDBOX_PORTS = frozenset({80, 443, 3000, 4300, 4400, 8080})
PRODUCTION_PORTS = frozenset({443})
MAX_URL_LENGTH = 2048

# (host, port) -> the addresses the name resolves to, as text. Injectable for tests.
Resolver = Callable[[str, int], Awaitable[list[str]]]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


async def system_resolver(host: str, port: int) -> list[str]:
    """The event loop's getaddrinfo (the system resolver, in a thread)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        if address not in seen:
            seen.append(address)
    return seen


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # as in the URL: sent as Host and as the TLS server name
    port: int
    addresses: tuple[str, ...]  # the vetted addresses, in resolver order: connect only to these


class UrlNotAllowed(WebhookEndpointUrlNotAllowed):
    def __init__(self, reason: str) -> None:
        super().__init__(f"The webhook URL is not allowed: {reason}.", {"reason": reason})


@dataclass(frozen=True)
class _Parts:
    scheme: str
    host: str
    port: int


def _parse(url: str, environment: str) -> _Parts:
    # isprintable() is False for control characters and every white space but " ".
    if len(url) > MAX_URL_LENGTH or not url.isprintable() or " " in url:
        raise UrlNotAllowed("not a valid URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UrlNotAllowed("not a valid URL") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in ("http", "https") or not host:
        raise UrlNotAllowed("must be an absolute http or https URL")
    if parts.username is not None or parts.password is not None:
        raise UrlNotAllowed("must not carry user information")
    if parts.fragment:
        raise UrlNotAllowed("must not have a fragment")
    if port is None:
        port = 443 if scheme == "https" else 80
    if environment == PRODUCTION:
        if scheme != "https":
            raise UrlNotAllowed("a PRODUCTION application needs https")
        if port not in PRODUCTION_PORTS:
            raise UrlNotAllowed("a PRODUCTION application may use port 443 only")
        if host.lower() == "localhost" or host.lower().endswith(".localhost"):
            raise UrlNotAllowed("localhost is not allowed in PRODUCTION")
    elif port not in SANDBOX_PORTS:
        raise UrlNotAllowed("a SANDBOX application may use ports 80, 443, 3000, 4300, 4400, 8080")
    return _Parts(scheme, host, port)


def _literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_public(address: IpAddress) -> bool:
    """False for every range a production webhook must never reach."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None and not is_public(embedded):
            return False
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def check_text(url: str, environment: str) -> None:
    """The rules that need no resolution (used at creation for SANDBOX, where any address goes)."""
    parts = _parse(url, environment)
    literal = _literal(parts.host)
    if environment == PRODUCTION and literal is not None and not is_public(literal):
        raise UrlNotAllowed("the address is not public")


async def vet(url: str, environment: str, resolver: Resolver | None = None) -> Target:
    """Judge the URL and pick the address to connect to. Raises UrlNotAllowed."""
    parts = _parse(url, environment)
    literal = _literal(parts.host)
    if literal is not None:
        addresses: list[IpAddress] = [literal]
    else:
        try:
            resolved = await (resolver or system_resolver)(parts.host, parts.port)
        except (OSError, UnicodeError):
            raise UrlNotAllowed("the host name does not resolve") from None
        addresses = [a for a in (_literal(text) for text in resolved) if a is not None]
        if not addresses:
            raise UrlNotAllowed("the host name does not resolve")
    if environment == PRODUCTION:
        # Every address must be public: a name that also resolves to a private address could
        # be steered there by the next lookup.
        if not all(is_public(a) for a in addresses):
            raise UrlNotAllowed("the host resolves to an address that is not public")
    chosen: list[str] = []
    for address in addresses:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if str(address) not in chosen:
            chosen.append(str(address))
    return Target(url, parts.scheme, parts.host, parts.port, tuple(chosen))
