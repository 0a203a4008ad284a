"""The game aggregate and `evolve`, the one fold that every replay uses (R26)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Generic, NoReturn, Protocol, Self, TypeVar

from service.game import events as ev
from service.rules.hand import Hand
from service.rules.tiles import Tile, parse_tiles

H = TypeVar("H", bound="Turned")
SPINNER: Final = "spinner"
"""The variant of a game whose rules name none (RULES.md)."""


class Turned(Protocol):
    """What `Match` reads of a variant's hand."""

    @property
    def turn(self) -> int | None:
        """The seat to move in the hand."""

    @property
    def number(self) -> int:
        """The hand's number in the match."""

    @property
    def awaiting_server(self) -> bool:
        """Whether the server's own event comes next, so no seat may move."""

    def clone(self) -> Self:
        """Return an independent copy."""

    def to_dict(self) -> dict[str, Any]:
        """Return the hand as plain data."""


class Match(Generic[H]):
    """What every variant's state of a match holds and answers alike: its fields, its seats
    and whose turn it is."""

    __slots__ = ("players", "rules", "version", "last_hash", "hand", "hand_seq", "totals",
                 "scores", "winners", "status", "hand_over", "turn_at", "timeouts", "timing_out")

    def __init__(self) -> None:
        self.players: list[dict[str, Any]] = []
        self.rules: dict[str, Any] = {}
        self.version = 0
        self.last_hash = ev.GENESIS
        self.hand: H | None = None
        self.hand_seq = 0  # the seq of the current hand's hand_started event
        self.totals: list[int] = []
        self.scores: list[dict[str, Any]] = []
        self.winners: list[int] = []
        self.status = "playing"
        self.hand_over = False  # whether the current hand has been scored
        self.turn_at: str | None = None  # with a turn clock, the `at` of the last event
        self.timeouts: list[int] = []  # consecutive timeouts by seat (API.md "Turn clocks")
        self.timing_out: int | None = None  # the seat whose timed-out move is to follow

    @property
    def seats(self) -> int:
        """The number of seats (R4, F2)."""
        return len(self.players)

    @property
    def turn(self) -> int | None:
        """The seat to move, or None between hands and once the match has ended."""
        if self.status != "playing" or self.hand is None or self.hand_over:
            return None
        return self.hand.turn

    @property
    def awaiting_server(self) -> bool:
        """Whether the server's own event comes next, so no seat may move now (a state at
        the version of an event whose append goes on): the move made for a timed-out seat
        (API.md "Turn clocks"), or its hand's (see Hand.awaiting_server)."""
        return self.timing_out is not None \
            or (self.hand is not None and self.hand.awaiting_server)

    def clone(self) -> Self:
        """Return an independent copy: what the fold changes in place (the hand, the scores,
        All Fives' totals) is copied, the rest shared."""
        other = self.__class__.__new__(self.__class__)
        for name in Match.__slots__:
            setattr(other, name, getattr(self, name))
        other.hand = self.hand.clone() if self.hand else None
        other.scores, other.totals = list(self.scores), list(self.totals)
        return other

    def to_dict(self) -> dict[str, Any]:
        """Return the state as plain data, for snapshots and comparisons."""
        return {
            "players": self.players, "rules": self.rules, "version": self.version,
            "last_hash": self.last_hash, "hand": self.hand.to_dict() if self.hand else None,
            "hand_seq": self.hand_seq,
            "totals": list(self.totals), "scores": list(self.scores),
            "winners": list(self.winners), "status": self.status,
            "turn_at": self.turn_at, "timeouts": list(self.timeouts),
        }

    def restore(self, data: dict[str, Any], hand: H | None) -> Self:
        """Fill a fresh state in from `to_dict` output, with its hand rebuilt by the
        variant's hand class; return it."""
        self.players, self.rules = data["players"], data["rules"]
        self.version, self.last_hash = data["version"], data["last_hash"]
        self.hand, self.hand_seq = hand, data["hand_seq"]
        self.totals, self.scores = list(data["totals"]), list(data["scores"])
        self.winners, self.status = list(data["winners"]), data["status"]
        self.turn_at = data.get("turn_at")  # absent from snapshots older than turn clocks
        self.timeouts = list(data.get("timeouts") or [0] * len(self.players))
        self.hand_over = bool(self.scores and hand
                              and self.scores[-1]["hand_number"] == hand.number)
        return self


class GameState(Match[Hand]):
    """Everything the log says about one match; built only by `evolve`."""

    __slots__ = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameState:
        """Rebuild a state from `to_dict` output."""
        return cls().restore(data, Hand.from_dict(data["hand"]) if data["hand"] else None)


class Record(Protocol):
    """What every variant's state keeps of a match, which the shared handlers fold."""

    players: list[dict[str, Any]]
    rules: dict[str, Any]
    version: int
    last_hash: str
    totals: list[int]
    scores: list[dict[str, Any]]
    winners: list[int]
    status: str
    hand_over: bool
    turn_at: str | None
    timeouts: list[int]
    timing_out: int | None


def _game_created(state: Record, seat: int | None, data: dict[str, Any]) -> None:
    state.players = [dict(p) for p in data["players"]]
    state.rules = {"variant": SPINNER, **data["rules"]}  # a log naming none is Spinner's
    state.totals = [0] * len(state.players)
    state.timeouts = [0] * len(state.players)


def _hand_started(state: GameState, seat: int | None, data: dict[str, Any]) -> None:
    deck = parse_tiles(data["deck"])
    state.hand = Hand.deal(data["hand_number"], state.rules["opening"], deck,
                           data["shuffler"], state.seats)
    state.hand_seq = state.version + 1
    state.hand_over = False


def _tile_drawn(state: GameState, seat: int | None, data: dict[str, Any]) -> None:
    hand, tile = state.hand or no_hand(), Tile.parse(data["tile"])
    assert seat is not None
    if data["reason"] == "search":
        hand.apply_search_draw(seat, tile)
    else:
        hand.apply_draw(seat, tile)
        acted(state, seat)


def _tile_played(state: GameState, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None
    (state.hand or no_hand()).apply_play(seat, Tile.parse(data["tile"]), data["end"],
                                          data["expose"], data["new_ends"])
    acted(state, seat)


def _passed(state: GameState, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None
    (state.hand or no_hand()).apply_pass(seat)
    acted(state, seat)


def _obligation_lifted(state: GameState, seat: int | None, data: dict[str, Any]) -> None:
    (state.hand or no_hand()).lift_obligations()


def _hand_ended(state: Record, seat: int | None, data: dict[str, Any]) -> None:
    state.scores.append({"hand_number": data["hand_number"], "points": data["points"],
                         "winner": data["winner"], "ended_by": data["ended_by"]})
    state.totals = [t + p for t, p in zip(state.totals, data["points"], strict=True)]
    state.hand_over = True


def _game_ended(state: Record, seat: int | None, data: dict[str, Any]) -> None:
    state.winners = list(data["winners"])
    state.status = "finished"


def _turn_timed_out(state: Record, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None
    state.timeouts = [n + (s == seat) for s, n in enumerate(state.timeouts)]
    state.timing_out = seat


def _seat_left(state: Record, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None  # the seat is an AI's from now on (API.md "Leaving")
    state.players = [{**p, "kind": "ai", "level": data["level"]} if s == seat else p
                     for s, p in enumerate(state.players)]


def acted(state: Record, seat: int) -> None:
    """Count a seat's move: the one a timeout made for it, else its own, which ends its run
    of consecutive timeouts."""
    if state.timing_out == seat:
        state.timing_out = None
    elif state.timeouts[seat]:
        state.timeouts = [0 if s == seat else n for s, n in enumerate(state.timeouts)]


def no_hand() -> NoReturn:
    """Refuse an event that needs a hand before any has started (`state.hand or no_hand()`)."""
    raise ValueError("no hand has started")


_APPLY: dict[str, Callable[[GameState, int | None, dict[str, Any]], None]] = {
    ev.GAME_CREATED: _game_created, ev.HAND_STARTED: _hand_started,
    ev.TILE_DRAWN: _tile_drawn, ev.TILE_PLAYED: _tile_played, ev.PASSED: _passed,
    ev.OBLIGATION_LIFTED: _obligation_lifted, ev.HAND_ENDED: _hand_ended,
    ev.GAME_ENDED: _game_ended, ev.TURN_TIMED_OUT: _turn_timed_out, ev.SEAT_LEFT: _seat_left,
}


SHARED_FOLD: dict[str, Callable[[Record, int | None, dict[str, Any]], None]] = {
    ev.GAME_CREATED: _game_created, ev.HAND_ENDED: _hand_ended, ev.GAME_ENDED: _game_ended,
    ev.TURN_TIMED_OUT: _turn_timed_out, ev.SEAT_LEFT: _seat_left,
}
"""The events every variant folds alike: the match's creation, each hand's end, its end,
a turn timed out and a seat left (API.md "Lifecycle")."""

R = TypeVar("R", bound=Record)


def fold(apply: Mapping[str, Callable[[R, int | None, dict[str, Any]], None]],
         events: Iterable[ev.Event], state: R) -> R:
    """Fold `events` into `state` through a variant's handlers by event type, numbering and
    chaining each as `evolve` does (Spinner's own fold, kept apart on its hot path)."""
    for event in events:
        apply[event["type"]](state, event.get("seat"), event["data"])
        state.version += 1
        if "turn_seconds" in state.rules:  # as `evolve`: a fact of the log (R26)
            state.turn_at = event.get("at")
        state.last_hash = event.get("hash", state.last_hash)
    return state


def evolve(state: GameState, event: ev.Event) -> GameState:
    """Apply one recorded event to the state and return it (one branch per event type)."""
    _APPLY[event["type"]](state, event.get("seat"), event["data"])
    state.version += 1
    if "turn_seconds" in state.rules:  # a fact of the log: replay reads no clock (R26)
        state.turn_at = event.get("at")
    state.last_hash = event.get("hash", state.last_hash)
    return state


def recorder(apply: Mapping[str, Callable[[R, int | None, dict[str, Any]], None]]
             ) -> Callable[[R, list[ev.Event], str | None, str, int | None, dict[str, Any]], None]:
    """Return a variant's `record(state, events, at, type, seat, data)`, which folds a
    decided event into the state at once through the variant's handlers (numbered and
    chained as `fold` does, inline: this path is hot) and keeps it in `events`: sealed (seq,
    time `at`, hash), or unsealed (`{type, seat, data}`) when `at` is None, for simulations."""
    def record(state: R, events: list[ev.Event], at: str | None, type_: str,
               seat: int | None, data: dict[str, Any]) -> None:
        event: ev.Event = {"type": type_, "seat": seat, "data": data}
        apply[type_](state, seat, data)
        state.version += 1
        if "turn_seconds" in state.rules:  # as `evolve`: the event's `at`, None unsealed
            state.turn_at = at
        if at is not None:
            event = ev.seal(event, state.version, at, state.last_hash)
            state.last_hash = event["hash"]
        events.append(event)
    return record


record: Final = recorder(_APPLY)
"""Spinner's `record` (see `recorder`)."""


def replay(events: Iterable[ev.Event], state: GameState | None = None) -> GameState:
    """Fold `events` into `state` (a fresh game by default): the same events, the same state."""
    state = state if state is not None else GameState()
    for event in events:
        evolve(state, event)
    return state
