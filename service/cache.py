"""A small thread-safe LRU map, for what a process may keep between requests."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class Lru(Generic[V]):
    """At most `size` entries; the least recently used one is dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """Return the entry for `key` (None if absent), marking it recently used."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def take(self, key: str) -> V | None:
        """Remove and return the entry for `key`: the caller has it to itself until `put`."""
        with self._lock:
            return self._items.pop(key, None)

    def put(self, key: str, value: V) -> None:
        """Store `value` under `key`, dropping the oldest entry beyond `size`."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


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
