"""Back ends' API keys: each named, with its quota, and known only by its SHA-256."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass

from service.usecases.clients import Client

NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""A key's name: what logs, metrics and Redis keys may show of it."""
DIGEST = re.compile(r"[0-9a-f]{64}")
"""The hex SHA-256 of a key, the only form the settings hold."""


@dataclass(frozen=True)
class ApiKey:
    """A back end's key: its name, the hex SHA-256 of the key, and its requests a minute
    (0: no limit)."""

    name: str
    digest: str
    per_minute: int

    @property
    def client(self) -> Client:
        """The client this key's requests, games and AI work count against."""
        return Client(f"key:{self.name}", keyed=True)


def parse_api_keys(text: str, default_per_minute: int) -> tuple[ApiKey, ...]:
    """Read comma-separated `name:sha256hex[:requests_per_minute]` entries (the quota defaults
    to `default_per_minute`); ValueError names a malformed entry by its place, not its text."""
    keys = tuple(_entry(i, e.strip(), default_per_minute)
                 for i, e in enumerate(text.split(","), 1) if e.strip())
    if len({k.name for k in keys}) < len(keys) or len({k.digest for k in keys}) < len(keys):
        raise ValueError("API_KEYS names a key or a hash twice")
    return keys


def _entry(place: int, entry: str, default_per_minute: int) -> ApiKey:
    name, _, rest = entry.partition(":")
    digest, _, quota = rest.lower().partition(":")
    if not (NAME.fullmatch(name) and DIGEST.fullmatch(digest)
            and (not quota or quota.isascii() and quota.isdigit())):
        raise ValueError(f"API_KEYS entry {place} is not name:sha256hex[:requests_per_minute]")
    return ApiKey(name, digest, int(quota) if quota else default_per_minute)


def find_key(keys: Iterable[ApiKey], sent: str) -> ApiKey | None:
    """Return the key whose digest is the SHA-256 of `sent`, else None; every digest is
    compared, each in constant time, so the time taken says nothing of which came close."""
    digest = hashlib.sha256(sent.encode()).hexdigest()
    found = None
    for key in keys:
        if hmac.compare_digest(key.digest, digest):
            found = key
    return found
