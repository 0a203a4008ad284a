"""Fair shuffles (API.md "Fair shuffles"): a hand's deck comes with a salt, and its
`hand_started` carries a commitment to both that anyone can check once they are revealed."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, NamedTuple

from service.rules.tiles import Tile


class Shuffled(NamedTuple):
    """A hand's shuffled 66-tile deck (R5) and the salt of its commitment (64 hex digits);
    no salt, no commitment: for simulations, whose decks nobody needs to trust."""

    deck: Sequence[Tile]
    salt: str | None = None


def commitment(salt: str, deck: Sequence[str]) -> str:
    """Return the hex SHA-256 of the UTF-8 text `<salt>:<deck tiles joined by commas>`."""
    return hashlib.sha256(f"{salt}:{','.join(deck)}".encode()).hexdigest()


def commitment_holds(data: dict[str, Any]) -> bool:
    """Whether a `hand_started`'s data keeps its word: no commitment, or one that its deck
    and salt give."""
    if "commitment" not in data:
        return True
    salt = data.get("salt")
    return isinstance(salt, str) and commitment(salt, data["deck"]) == data["commitment"]
