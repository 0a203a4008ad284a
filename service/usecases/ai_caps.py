"""What one client may make the AI workers do: its open games with AI seats and its AI turns
queued at once, counted in a ledger (a port) against the caps of its kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from service.usecases.clients import Client

UNLIMITED = 1 << 62


@dataclass(frozen=True)
class Limits:
    """The caps of one kind of client: open games with AI seats, AI turns queued at once."""

    games: int = UNLIMITED
    turns: int = UNLIMITED


class AiLedger(Protocol):
    """Where each client's open AI games and queued AI turns are counted (atomically)."""

    def admit_game(self, client: Client, game_id: str, cap: int) -> bool:
        """Count the game among the client's open AI games and return True, unless it has
        `cap` of them already (then False)."""

    def open_games(self, client: Client) -> list[str]:
        """Return the games counted as the client's open AI games."""

    def release_game(self, client: Client, game_id: str) -> None:
        """Stop counting the game (it ended)."""

    def admit_turn(self, client: Client, turn: str, cap: int) -> bool:
        """Count the turn as queued and return True (also if it is counted already, or done:
        a read from before the game moved on asks for a turn done since), unless the client
        has `cap` turns queued already: then keep it among the client's deferred turns and
        return False."""

    def finish_turn(self, client: Client, turn: str) -> None:
        """Stop counting the turn as queued: its job is done (remembered for a while)."""

    def claim_deferred(self, client: Client, cap: int) -> list[str]:
        """Count the client's oldest deferred turns that fit under `cap` queued turns as
        queued (no longer deferred), and return them: the caller queues them."""

    def deferring(self) -> list[Client]:
        """Return the clients that had deferred turns; forget those that have none left."""


class Uncapped:
    """A ledger that counts nothing and admits everything: where no caps are kept."""

    def admit_game(self, client: Client, game_id: str, cap: int) -> bool:
        """Admit the game."""
        return True

    def open_games(self, client: Client) -> list[str]:
        """Return no game."""
        return []

    def release_game(self, client: Client, game_id: str) -> None:
        """Count nothing."""

    def admit_turn(self, client: Client, turn: str, cap: int) -> bool:
        """Admit the turn."""
        return True

    def finish_turn(self, client: Client, turn: str) -> None:
        """Count nothing."""

    def claim_deferred(self, client: Client, cap: int) -> list[str]:
        """Return no turn."""
        return []

    def deferring(self) -> list[Client]:
        """Return no client."""
        return []


@dataclass(frozen=True)
class AiCaps:
    """The ledger and the caps of anonymous and keyed clients (default: none)."""

    ledger: AiLedger = field(default_factory=Uncapped)
    anonymous: Limits = Limits()
    keyed: Limits = Limits()
    idle_s: float = 3600.0  # a game with no event for this long no longer counts as open

    def limits(self, client: Client) -> Limits:
        """Return the caps of the client's kind."""
        return self.keyed if client.keyed else self.anonymous


def turn_name(game_id: str, version: int) -> str:
    """Return the ledger's name of the AI turn due at `version` of a game."""
    return f"{game_id}:{version}"


def parse_turn(name: str) -> tuple[str, int]:
    """Return the game and version a ledger's turn name names."""
    game_id, _, version = name.rpartition(":")
    return game_id, int(version)
