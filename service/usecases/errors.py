"""What the use cases refuse, as data: a sentence for the caller and the facts it names.

Every refusal is a `Refusal` subclass; the API gives each its status and problem type. A
refusal kept as an Idempotency-Key's answer is stored by `to_record` and rebuilt, the same
kind with the same detail and facts, by `from_record`.
"""

from __future__ import annotations

from typing import Any

KINDS: dict[str, type[Refusal]] = {}
"""Every refusal class by name, for `from_record`."""


class Refusal(Exception):
    """A request the use cases turn down; `extra` holds the facts the answer names."""

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        KINDS[cls.__name__] = cls

    def to_record(self) -> dict[str, Any]:
        """Return the refusal as plain data: its kind, detail and facts."""
        return {"kind": type(self).__name__, "detail": self.detail, "extra": self.extra}

    @staticmethod
    def from_record(record: dict[str, Any]) -> Refusal:
        """Rebuild a refusal from `to_record` output."""
        return KINDS[record["kind"]](record["detail"], **record["extra"])


class AtVersion(Refusal):
    """A refusal that names the version the game is at (`extra["version"]`)."""

    @property
    def version(self) -> int:
        """The game's version when the request was refused."""
        version: int = self.extra["version"]
        return version


class NoSuchGame(Refusal):
    """No game has that id."""


class NoSuchVersion(Refusal):
    """The game has no state at the version asked for."""


class TokenMissing(Refusal):
    """The request needs a seat token and sent none."""


class BadToken(Refusal):
    """The token is no seat token of this game."""


class OtherGamesToken(Refusal):
    """The token is a seat token of another game."""


class VersionMismatch(AtVersion):
    """If-Match named versions the game is not at (or another move landed first)."""


class RaceLost(AtVersion):
    """Another move of the seat, decided on the same version, was appended first."""


class NotFinished(Refusal):
    """The match has not ended yet (its complete log is not public)."""


class KeyReused(Refusal):
    """The Idempotency-Key was sent before with another body."""


class KeyPending(Refusal):
    """A request with this Idempotency-Key is still being handled."""


class TooManyKeys(Refusal):
    """The seat holds as many live Idempotency-Keys as it may; `extra["retry_after"]` is the
    seconds until the oldest expires."""


class InvalidRequest(Refusal):
    """The request does not fit its schema; `extra["errors"]` names each field."""


class MalformedMove(InvalidRequest):
    """The move is not well formed (R2, R14): not a tile, an action or an expose."""


class RefusedNotifyUrl(InvalidRequest):
    """The creation's `notify.url` may not receive notifications: not https, or its host is
    (or resolves to) a loopback, private, link-local or otherwise non-public address."""


class OutOfTurn(Refusal):
    """The seat is not the one to move, or the match has ended (R4, R24): `extra["rule"]`."""


class IllegalMove(Refusal):
    """The rules forbid the move now: `extra["rule"]` and the seat's `legal_moves`."""


class TooManyAiGames(Refusal):
    """The client has as many open games with AI seats as its cap allows;
    `extra["retry_after"]` is the seconds after which to try again."""


class BadTicket(Refusal):
    """The stream ticket is no live ticket of this game (unknown, expired, another game's)."""


class SeatLeft(Refusal):
    """The seat has left the match (API.md "Leaving"): an AI moves for it, and it cannot
    leave again."""
