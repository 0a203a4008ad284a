"""A small LRU map, for what a process may keep between requests, and values kept a version."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class Lru(Generic[V]):
    """At most `size` entries; the least recently used one is dropped first.

    Threads (and greenlets) may share it with no lock: each step is one call of OrderedDict's,
    which runs in C and so at once under the GIL, and a step that another's step made moot
    (touching an entry just taken, trimming a dict already trimmed) is skipped. Under gevent
    a lock would be Python code, taken several times a request.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, V] = OrderedDict()

    def get(self, key: str) -> V | None:
        """Return the entry for `key` (None if absent), marking it recently used."""
        try:
            value = self._items[key]
            self._items.move_to_end(key)
        except KeyError:  # absent, or taken meanwhile
            return None
        return value

    def take(self, key: str) -> V | None:
        """Remove and return the entry for `key`: the caller has it to itself until `put`."""
        return self._items.pop(key, None)

    def put(self, key: str, value: V) -> None:
        """Store `value` under `key`, dropping the oldest entries beyond `size`."""
        items = self._items
        items[key] = value
        try:
            items.move_to_end(key)
            while len(items) > self.size:
                items.popitem(last=False)
        except KeyError:  # taken or trimmed meanwhile
            pass


class Versioned(Generic[V]):
    """Each key's value at one version, the last one asked for; at most `size` keys (LRU)."""

    def __init__(self, size: int) -> None:
        self._items: Lru[tuple[int, V]] = Lru(size)

    def get(self, key: str, version: int, make: Callable[[], V]) -> V:
        """Return the value of `key` at `version`, made by `make` unless it is the one kept."""
        kept = self._items.get(key)
        if kept is None or kept[0] != version:
            kept = (version, make())
            self._items.put(key, kept)
        return kept[1]
