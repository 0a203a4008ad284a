"""The event store's exceptions, shared by every adapter."""

from __future__ import annotations


class StoreError(Exception):
    """Something the event store refused or could not do."""


class ConcurrencyError(StoreError):
    """The game is not at the expected version: another writer appended first."""

    def __init__(self, current_version: int) -> None:
        super().__init__(f"the game is at version {current_version}")
        self.current_version = current_version


class StoreUnavailable(StoreError):
    """The store's server cannot be reached (connection refused, timed out)."""
