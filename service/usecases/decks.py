"""Where a hand's deck and salt come from (R5, API.md "Fair shuffles"): the system's CSPRNG,
or, for a game whose seed is honoured, HMAC-SHA256 keyed with a server secret over the game
id, the seed and the hand number. Nothing a client knows or guesses gives a deck away."""

from __future__ import annotations

import functools
import hashlib
import hmac
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from service.game.commands import Shuffle
from service.game.fairness import Shuffled
from service.rules.tiles import TILES, Tile

SALT_BYTES = 32


@functools.cache
def process_secret() -> bytes:
    """Return a secret made at random once per process: the default where none is kept."""
    return secrets.token_bytes(32)


@dataclass(frozen=True)
class Dealer:
    """Shuffles the games of one process. `seeded`: a client's seed is honoured (reproducible
    games); `secret` gives the server secret those decks come from (read when first needed,
    the same in every process that deals)."""

    seeded: bool = False
    secret: Callable[[], bytes] = field(default=process_secret)

    def kept_seed(self, seed: int | None) -> int | None:
        """Return the seed a new game keeps: `seed` when seeded games are allowed, else None."""
        return seed if self.seeded else None

    def shuffle(self, game_id: str, seed: int | None,
                tiles: Sequence[Tile] = TILES) -> Shuffle:
        """Return the game's shuffle of its variant's `tiles` (R5, F3): from the CSPRNG
        without a seed, else derived from the secret, the game id, the seed and the hand
        number (so the same seed in another game deals unrelated decks, and this game always
        deals these)."""
        if seed is None:
            return functools.partial(fresh, tiles=tiles)

        def derived(hand_number: int) -> Shuffled:
            message = f"{game_id}:{seed}:{hand_number}".encode()
            deck = list(tiles)
            random.Random(self._digest(b"deck", message)).shuffle(deck)  # R5
            return Shuffled(deck, self._digest(b"salt", message).hex())
        return derived

    def _digest(self, label: bytes, message: bytes) -> bytes:
        return hmac.new(self.secret(), label + b":" + message, hashlib.sha256).digest()


def fresh(hand_number: int, tiles: Sequence[Tile] = TILES) -> Shuffled:
    """Return a deck of `tiles` shuffled by the operating system's CSPRNG (R5) and a random
    salt."""
    deck = list(tiles)
    secrets.SystemRandom().shuffle(deck)
    return Shuffled(deck, secrets.token_hex(SALT_BYTES))
