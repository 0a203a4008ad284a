"""What every use case works with: the ports, the clock and this process's caches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.game.state import Match
from service.usecases.ai_caps import AiCaps
from service.usecases.cache import Lru, Versioned
from service.usecases.decks import Dealer
from service.usecases.ports import EventStore, Meter, NoMeter, NoNotifier, Notifier, TurnQueue

if TYPE_CHECKING:  # the modules that build these values use this one
    from service.usecases.seat_views import Table
    from service.usecases.seats import Meta

CACHED_GAMES = 1024
"""Games whose state, meta and shared table a process keeps between requests (LRU)."""


@dataclass(eq=False)
class Context:
    """The event store, the turn queue, the clock, the meter, the dealer, the AI caps and the
    notifier, and what a process keeps."""

    store: EventStore
    queue: TurnQueue
    clock: Callable[[], str]
    meter: Meter = field(default_factory=NoMeter)
    dealer: Dealer = field(default_factory=Dealer)
    caps: AiCaps = field(default_factory=AiCaps)
    notifier: Notifier = field(default_factory=NoNotifier)
    states: Lru[Match[Any]] = field(default_factory=lambda: Lru(CACHED_GAMES))
    """Each state is lent to one request at a time (`loading.load`, `loading.keep`)."""
    metas: Lru[Meta] = field(default_factory=lambda: Lru(CACHED_GAMES))
    tables: Versioned[Table] = field(default_factory=lambda: Versioned(CACHED_GAMES))
    """Each game's shared table at its last version shown: read only."""
