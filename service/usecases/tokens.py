"""Seat tokens: random bearer secrets of which only a hash is kept."""

from __future__ import annotations

import hashlib
import re
import secrets

GAME_ID = re.compile(r"[0-9a-f]{16}")
"""The shape of every game id `new_game_id` makes."""


def new_token(game_id: str) -> str:
    """Return a fresh token for a seat of `game_id`: the game id and 256 random bits."""
    return f"{game_id}.{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    """Return the hex SHA-256 of a token, the only form the store keeps."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_game(token: str) -> str:
    """Return the game id a token names (it may still be forged)."""
    return token.partition(".")[0]


def new_game_id() -> str:
    """Return a fresh, unguessable game id."""
    return secrets.token_hex(8)


def new_append_id() -> str:
    """Return a fresh id for one attempted append, kept with its events (`EventStore.append`)."""
    return secrets.token_hex(8)
