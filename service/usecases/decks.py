"""Where a hand's deck comes from: shuffled by a seeded generator, or by the system's."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from service.rules.tiles import TILES, Tile


def deck_source(seed: object | None) -> Callable[[int], Sequence[Tile]]:
    """Return the deck source for a game: seeded per hand if `seed` is set, else system random."""
    def shuffle(hand_number: int) -> list[Tile]:
        rng = random.Random(f"{seed}:{hand_number}") if seed is not None else random.SystemRandom()
        deck = list(TILES)
        rng.shuffle(deck)  # R5: uniformly at random; the order is recorded in hand_started
        return deck
    return shuffle
