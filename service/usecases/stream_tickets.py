"""Stream tickets: short-lived secrets that open one game's stream as one seat, for clients
that cannot send a header (a browser's EventSource). Only a hash is kept, with its expiry;
a ticket reads that stream and nothing else (never a move)."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import NamedTuple

from service.usecases.context import Context
from service.usecases.errors import BadTicket
from service.usecases.seats import require_game, seat_for
from service.usecases.tokens import token_hash


class Ticket(NamedTuple):
    """A ticket as it is shown once, and when it stops opening the stream (RFC 3339)."""

    ticket: str
    expires_at: str

    def to_dict(self) -> dict[str, str]:
        """Return it in its answer's shape (StreamTicketOut: ticket, expires_at)."""
        return {"ticket": self.ticket, "expires_at": self.expires_at}


def issue(ctx: Context, game_id: str, token: str | None, ttl_s: float) -> Ticket:
    """Return a fresh ticket to the stream of `game_id` as the seat of `token` (refused as
    any move's token is), which opens it for `ttl_s` seconds."""
    seat_for(ctx, game_id, token, required=True)
    assert token is not None
    ticket = secrets.token_urlsafe(32)
    ctx.store.put_ticket(game_id, token_hash(ticket), token_hash(token), ttl_s)
    return Ticket(ticket, _later(ctx.clock(), ttl_s))


def ticket_token(ctx: Context, game_id: str, ticket: str) -> str | None:
    """Return the hash of the seat token that took `ticket` for `game_id`; None if it is no
    live ticket of that game (unknown, expired, or another game's)."""
    return ctx.store.ticket_token(game_id, token_hash(ticket))


def ticket_seat(ctx: Context, game_id: str, ticket: str) -> int:
    """Return the seat whose stream `ticket` opens; BadTicket unless it is a live ticket of
    `game_id` (a game that is gone answers NoSuchGame first)."""
    seats = require_game(ctx, game_id).seats
    digest = ticket_token(ctx, game_id, ticket)
    if digest is None or digest not in seats:
        raise BadTicket("the ticket is no live stream ticket of this game (unknown, expired "
                        "or another game's); a seat's token gets a new one from its "
                        "stream-tickets path")
    return seats[digest]


def _later(now: str, seconds: float) -> str:
    """Return the RFC 3339 time `seconds` after `now` (one of the clock's), to the ms."""
    then = datetime.fromisoformat(now) + timedelta(seconds=seconds)
    return then.isoformat(timespec="milliseconds").replace("+00:00", "Z")
