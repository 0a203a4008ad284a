"""The client asking: by its API key, else by its address."""

from __future__ import annotations

import functools

from flask import current_app, request

from service.adapters.api_keys import ApiKey, find_key, parse_api_keys
from service.adapters.settings import Settings
from service.api import problems
from service.usecases.clients import Client

KEY_HEADER = "X-Api-Key"
KEY_CHALLENGE = f'ApiKey header="{KEY_HEADER}"'
"""The WWW-Authenticate of a 401 for an unknown key: the key is sent in its own header."""


def asking_client() -> Client:
    """Return the client this request counts against: its API key's, else its address's;
    401 for an unknown key."""
    key = sent_key()
    return key.client if key is not None else address_client()


def address_client() -> Client:
    """Return the client of this request's address, whatever key or token it sends."""
    return Client(f"addr:{request.remote_addr or 'unknown'}")


def sent_key() -> ApiKey | None:
    """Return the API key sent in X-Api-Key, None if none is; 401 for a key the settings
    do not name (the answer never shows what was sent)."""
    sent = request.headers.get(KEY_HEADER)
    if sent is None:
        return None
    found = find_key(known_keys(current_app.extensions["spinner"].settings), sent)
    if found is None:
        raise problems.UnknownApiKey(f"the {KEY_HEADER} header names no key of this service",
                                     challenge=KEY_CHALLENGE)
    return found


@functools.cache
def known_keys(settings: Settings) -> tuple[ApiKey, ...]:
    """The API keys of `settings` (read once); ValueError if the setting is malformed."""
    return parse_api_keys(settings.api_keys, settings.rate_limit_per_key)
