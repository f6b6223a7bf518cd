"""Allowed webhook URLs (docs/webhooks.md), judged on the URL text and on the addresses a name resolves to.

| environment | rule |
|---|---|
| SANDBOX    | http or https; port 80, 443, 3000, 4300, 4400 or 8080; public addresses, and loopback or
               private ones (localhost included) only while PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE
               is on (config.py: on by default for the embedded SQLite database only) |
| PRODUCTION | https on port 443 only; every resolved address public (never localhost, private,
               loopback, link-local, multicast, reserved or unspecified; IPv4 or IPv6, IPv4-mapped
               and other IPv4-embedding IPv6 forms judged on the embedded IPv4) |

Link-local and cloud metadata addresses (and their IPv4-embedding IPv6 forms) are refused in
every environment, whatever the setting: a webhook must never read an instance's metadata.

``vet`` returns a ``Target`` that names the addresses the connection may go to: the sender
connects to one of those (the next on a refused connection), never to a fresh resolution (no
DNS-rebinding window).
"""

from __future__ import annotations

import asyncio
import functools
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
    public: bool  # every one of them is public (else no answer excerpt is kept: sender.py)


class UrlNotAllowed(WebhookEndpointUrlNotAllowed):
    def __init__(self, reason: str) -> None:
        super().__init__(f"The webhook URL is not allowed: {reason}.", {"reason": reason})


# One reason for a host name that does not resolve and one that resolves to a refused address:
# two would let a tenant probe which internal names exist (issue 37).
HOST_NOT_ALLOWED = "the URL's host is not allowed or does not resolve to an allowed address"


class HostNotAllowed(UrlNotAllowed):
    """A host name with no address, or with an address the rules refuse."""

    def __init__(self) -> None:
        super().__init__(HOST_NOT_ALLOWED)


@dataclass(frozen=True)
class _Parts:
    scheme: str
    host: str
    port: int


def _public_only(environment: str, sandbox_private: bool) -> bool:
    """Whether only public addresses may be reached (``sandbox_private``: the operator setting)."""
    return environment != SANDBOX or not sandbox_private


def _parse(url: str, environment: str, public_only: bool) -> _Parts:
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
    elif port not in SANDBOX_PORTS:
        raise UrlNotAllowed("a SANDBOX application may use ports 80, 443, 3000, 4300, 4400, 8080")
    if public_only and (host.lower() == "localhost" or host.lower().endswith(".localhost")):
        raise UrlNotAllowed(f"localhost is not allowed {_WHERE[environment == SANDBOX]}")
    return _Parts(scheme, host, port)


# Where a private address is refused, for the reason given: PRODUCTION, or SANDBOX with the
# operator setting off.
_WHERE = {False: "in PRODUCTION", True: "for SANDBOX applications on this service"}


def _literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    # The legacy IPv4 spellings getaddrinfo also accepts ("2852039166", "0xa9fea9fe",
    # "169.254.43518"): judged as the address they are, at creation too.
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, 6to4, Teredo or NAT64 address stands for."""
    embedded = address.ipv4_mapped or address.sixtofour
    if embedded is None and address.teredo is not None:
        embedded = address.teredo[1]
    if embedded is None and address in _NAT64:
        embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return embedded


def is_public(address: IpAddress) -> bool:
    """False for every range a production webhook must never reach."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
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


def is_never_allowed(address: IpAddress) -> bool:
    """Link-local (169.254/16, fe80::/10) and cloud metadata addresses: refused everywhere."""
    if address.is_link_local or address in METADATA_ADDRESSES:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        return embedded is not None and is_never_allowed(embedded)
    return False


def _judge(addresses: list[IpAddress], environment: str, public_only: bool, named: bool) -> None:
    # Every address is judged: a name that also resolves to a refused address could be steered
    # there by the next lookup. A name's refusal does not say which rule (HostNotAllowed).
    if any(is_never_allowed(a) for a in addresses):
        if named:
            raise HostNotAllowed()
        raise UrlNotAllowed("the address is link-local or cloud metadata, never allowed")
    if public_only and not all(is_public(a) for a in addresses):
        if named:
            raise HostNotAllowed()
        raise UrlNotAllowed(f"the address is not public (required {_WHERE[environment == SANDBOX]})")


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# AWS (IPv4 and IPv6), GCP and Azure use 169.254.169.254 (link-local anyway); Alibaba Cloud
# 100.100.100.200 (in the shared 100.64/10 range, reachable when private addresses are allowed).
METADATA_ADDRESSES: frozenset[IpAddress] = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)


def check_text(url: str, environment: str, *, sandbox_private: bool) -> None:
    """The rules that need no resolution: the text, and a host written as an address (used at
    creation for SANDBOX, whose host names are judged at every attempt)."""
    public_only = _public_only(environment, sandbox_private)
    parts = _parse(url, environment, public_only)
    literal = _literal(parts.host)
    if literal is not None:
        _judge([literal], environment, public_only, named=False)


async def vet(
    url: str, environment: str, resolver: Resolver | None = None, *, sandbox_private: bool
) -> Target:
    """Judge the URL and pick the address to connect to. Raises UrlNotAllowed.

    ``sandbox_private``: PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE (ignored for PRODUCTION)."""
    public_only = _public_only(environment, sandbox_private)
    parts, target = _judged_text(url, environment, public_only)
    if target is not None:
        return target
    try:
        resolved = await (resolver or system_resolver)(parts.host, parts.port)
    except (OSError, UnicodeError):
        raise HostNotAllowed() from None
    return _judged_addresses(url, parts, tuple(resolved), environment, public_only)


# Judging is a pure function of the URL text (and, for a host name, of the addresses this
# attempt's own lookup returned), so its result is kept: a worker vets the same few URLs on every
# attempt. The lookup itself is never kept: each attempt resolves afresh and connects only to
# what that lookup returned. A refusal raises and is not kept (lru_cache keeps only returns).
@functools.lru_cache(maxsize=4096)
def _judged_text(url: str, environment: str, public_only: bool) -> tuple[_Parts, Target | None]:
    """The URL's parts, and its Target when the host is written as an address."""
    parts = _parse(url, environment, public_only)
    literal = _literal(parts.host)
    if literal is None:
        return parts, None
    return parts, _target(url, parts, [literal], environment, public_only, named=False)


@functools.lru_cache(maxsize=4096)
def _judged_addresses(
    url: str, parts: _Parts, resolved: tuple[str, ...], environment: str, public_only: bool
) -> Target:
    addresses = [a for a in (_literal(text) for text in resolved) if a is not None]
    if not addresses:
        raise HostNotAllowed()
    return _target(url, parts, addresses, environment, public_only, named=True)


def _target(
    url: str,
    parts: _Parts,
    addresses: list[IpAddress],
    environment: str,
    public_only: bool,
    *,
    named: bool,
) -> Target:
    _judge(addresses, environment, public_only, named=named)
    chosen: list[str] = []
    for address in addresses:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if str(address) not in chosen:
            chosen.append(str(address))
    public = all(is_public(a) for a in addresses)
    return Target(url, parts.scheme, parts.host, parts.port, tuple(chosen), public)
