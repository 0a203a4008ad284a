"""`Games`: the one object the API and the workers call, over one process's context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.game import events as ev
from service.usecases import (
    ai_turns,
    creation,
    following,
    leaving,
    moves,
    reading,
    seats,
    stream_tickets,
    timeouts,
)
from service.usecases.ai_caps import AiCaps
from service.usecases.clients import Client
from service.usecases.context import Context
from service.usecases.decks import Dealer
from service.usecases.errors import Refusal
from service.usecases.ports import EventStore, Meter, NoMeter, NoNotifier, Notifier, TurnQueue
from service.usecases.seat_views import View


class Games:
    """The game service's use cases over an event store, a turn queue, a clock, a meter, a
    dealer, the AI caps and a notifier (webhooks).

    Each method is one use case of the modules named in it; they raise `errors.Refusal`s."""

    def __init__(self, store: EventStore, queue: TurnQueue, clock: Callable[[], str],
                 meter: Meter | None = None, dealer: Dealer | None = None,
                 caps: AiCaps | None = None, notifier: Notifier | None = None) -> None:
        self.ctx = Context(store, queue, clock, meter or NoMeter(), dealer or Dealer(),
                           caps or AiCaps(), notifier or NoNotifier())

    def create(self, players: list[dict[str, Any]], rules: dict[str, Any],
               seed: int | None, client: Client | None = None,
               notify: dict[str, Any] | None = None) -> creation.Created:
        """See `creation.create`."""
        return creation.create(self.ctx, players, rules, seed, client, notify)

    def require_game(self, game_id: str) -> seats.Meta:
        """See `seats.require_game`."""
        return seats.require_game(self.ctx, game_id)

    def variant_name(self, game_id: str) -> str:
        """See `seats.variant_name`."""
        return seats.variant_name(self.ctx, game_id)

    def seat_for(self, game_id: str, token: str | None, required: bool) -> int | None:
        """See `seats.seat_for`."""
        return seats.seat_for(self.ctx, game_id, token, required)

    def current_view(self, game_id: str, seat: int | None) -> View:
        """See `reading.current_view`."""
        return reading.current_view(self.ctx, game_id, seat)

    def view_at(self, game_id: str, seat: int | None, version: int) -> View:
        """See `reading.view_at`."""
        return reading.view_at(self.ctx, game_id, seat, version)

    def events(self, game_id: str, seat: int | None, after: int) -> list[ev.Event]:
        """See `reading.events`."""
        return reading.events(self.ctx, game_id, seat, after)

    def export(self, game_id: str) -> list[ev.Event]:
        """See `reading.export`."""
        return reading.export(self.ctx, game_id)

    def follow(self, game_id: str, seat: int | None, resume: int, quiet_s: float,
               with_state: bool = False) -> following.Followed | None:
        """See `following.follow`."""
        who = following.Follower(game_id, seat, with_state)
        return following.follow(self.ctx, who, resume, quiet_s)

    def stream_ticket(self, game_id: str, token: str | None,
                      ttl_s: float) -> stream_tickets.Ticket:
        """See `stream_tickets.issue`."""
        return stream_tickets.issue(self.ctx, game_id, token, ttl_s)

    def ticket_seat(self, game_id: str, ticket: str) -> int:
        """See `stream_tickets.ticket_seat`."""
        return stream_tickets.ticket_seat(self.ctx, game_id, ticket)

    def ticket_token(self, game_id: str, ticket: str) -> str | None:
        """See `stream_tickets.ticket_token`."""
        return stream_tickets.ticket_token(self.ctx, game_id, ticket)

    def move(self, game_id: str, seat: int, body: dict[str, Any],
             if_match: frozenset[int] | None, key: str | None) -> View:
        """See `moves.move`."""
        return moves.move(self.ctx, game_id, seat, body, if_match, key)

    def refuse_move(self, game_id: str, seat: int, key: str, digest: str,
                    refusal: Refusal) -> View:
        """See `moves.refuse_move`."""
        return moves.refuse_move(self.ctx, game_id, seat, key, digest, refusal)

    def ai_turn(self, game_id: str, version: int, choose: ai_turns.Chooser,
                pace: ai_turns.Pace | None = None) -> bool:
        """See `ai_turns.take_turn`."""
        return ai_turns.take_turn(self.ctx, game_id, version, choose, pace)

    def drain_deferred(self) -> int:
        """See `ai_turns.drain_all`."""
        return ai_turns.drain_all(self.ctx)

    def leave(self, game_id: str, seat: int, level: str) -> View:
        """See `leaving.leave`."""
        return leaving.leave(self.ctx, game_id, seat, level)

    def run_out_clock(self, game_id: str, version: int, choose: ai_turns.Chooser) -> bool:
        """See `timeouts.run_out`."""
        return timeouts.run_out(self.ctx, game_id, version, choose)
