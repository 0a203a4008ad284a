"""Where a notification may be sent: an https URL whose host is, and resolves to, public
addresses only (no server-side request forgery into the service's own network).

A URL is checked when a game is created and again, resolved afresh, before each try; the
try then connects to the very address checked (`Target.address`), so a name that resolves
elsewhere a moment later (DNS rebinding) is not called there."""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"https": 443, "http": 80}


class Refused(Exception):
    """A URL notifications may not go to; the message says why (without the secret)."""


@dataclass(frozen=True)
class Target:
    """A checked URL: its scheme, host (for Host and TLS's SNI), port, path with query, and
    the address to connect to."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


BRACKETED = re.compile(r"\[[^\]]+\](:[0-9]*)?")
"""A URL's host and port when the host is an IPv6 address: `[::1]` or `[::1]:8443`."""


def public(address: str) -> bool:
    """Whether an IP address is a public unicast one: not loopback, private, link-local,
    shared, unspecified, multicast or reserved (an IPv4-mapped or 6to4 IPv6 one as the IPv4
    it carries, which a relay may reach)."""
    ip = ipaddress.ip_address(address.partition("%")[0])  # an IPv6 zone is no part of it
    if isinstance(ip, ipaddress.IPv6Address):
        carried = ip.ipv4_mapped or ip.sixtofour
        if carried is not None:
            return public(str(carried))
        if ip.is_site_local:
            return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified
                                 or ip.is_loopback or ip.is_link_local or ip.is_private)


def resolve(url: str, allow_private: bool = False) -> Target:
    """Return the target of a notification URL, resolved now; Refused if it is not `https`
    (`http` too with `allow_private`), names no host, or its host resolves to an address
    that is not public (unless `allow_private`); or if it holds what a request line cannot
    (a space, a control or a non-ASCII character: percent-encode it), or port 0."""
    if not url.isascii() or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url):
        raise Refused("the URL must be ASCII, with no space or control character "
                      "(percent-encode them)")
    try:
        parts = urlsplit(url)
        hostname, netloc = parts.hostname, parts.netloc.rpartition("@")[2]
        if netloc.startswith("[") and not BRACKETED.fullmatch(netloc):  # `[::1]x`
            raise ValueError(netloc)
    except ValueError:  # a bracket without its pair, or around no IPv6 address
        raise Refused("the URL cannot be read: check its host") from None
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in schemes:
        raise Refused(f"the URL must be {' or '.join(schemes)}")
    if not hostname or parts.username is not None or parts.password is not None:
        raise Refused("the URL must name a host, and no user or password")
    try:
        port = DEFAULT_PORTS[parts.scheme] if parts.port is None else parts.port
    except ValueError:
        raise Refused("the URL's port is not a port number") from None
    if port == 0:
        raise Refused("the URL's port is not a port number")
    address = _checked_address(hostname, port, allow_private)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, hostname, port, path, address)


def _checked_address(host: str, port: int, allow_private: bool) -> str:
    """Return the first address `host` resolves to; Refused if it resolves to none, or
    (unless `allow_private`) to any that is not public."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused("its host name does not resolve") from None
    addresses = [str(info[4][0]) for info in found]
    if not addresses:
        raise Refused("its host name does not resolve")
    shut = [address for address in addresses if not public(address)]
    if shut and not allow_private:
        raise Refused(f"its host is or resolves to {shut[0]}, which is not a public address "
                      "(loopback, private, link-local or reserved)")
    return addresses[0]
