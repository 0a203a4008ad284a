"""Use cases: load -> replay -> decide -> append -> enqueue the AI; a few lines each."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from service.adapters import metrics
from service.api import problems
from service.game import events as ev
from service.game.commands import create_game, make_move
from service.game.state import GameState, replay
from service.game.views import own, table, visible_log
from service.rules.errors import RuleError
from service.rules.moves import Move
from service.rules.tiles import TILES, Tile
from service.usecases.cache import Lru, Versioned
from service.usecases.ports import ConcurrencyError, EventStore
from service.usecases.tokens import GAME_ID, new_game_id, new_token, token_game, token_hash

CACHED_GAMES = 1024
"""Games whose state, meta and shared view a process keeps between requests (LRU)."""
Chooser = Callable[[GameState, int, list[ev.Event]], Move]
"""Picks a seat's move from the state and the hand's log; a strategy sees only its view."""


class TurnQueue(Protocol):
    """Where AI turns are sent: one job per game version."""

    def enqueue_turn(self, game_id: str, version: int) -> None:
        """Queue the AI turn due at `version`, unless it is queued already."""

    def heal_turn(self, game_id: str, version: int) -> None:
        """Queue the AI turn due at `version` again if no live job holds it."""


@dataclass(frozen=True)
class Meta:
    """What never changes of a game: its seats by token hash, and its seed ('' if none)."""

    seats: dict[str, int]
    seed: str

    @classmethod
    def parse(cls, stored: dict[str, str]) -> Meta:
        """Read the stored meta fields (`token:<seat>` and `seed`)."""
        seats = {v: int(k.split(":")[1]) for k, v in stored.items() if k.startswith("token:")}
        return cls(seats, stored.get("seed", ""))


@dataclass
class Created:
    """A new game, its first state and every human seat's token (shown once)."""

    game_id: str
    state: GameState
    tokens: dict[int, str]


def deck_source(seed: object | None) -> Callable[[int], Sequence[Tile]]:
    """Return the deck source for a game: seeded per hand if `seed` is set, else system random."""
    def shuffle(hand_number: int) -> list[Tile]:
        rng = random.Random(f"{seed}:{hand_number}") if seed is not None else random.SystemRandom()
        deck = list(TILES)
        rng.shuffle(deck)  # R5: uniformly at random; the order is recorded in hand_started
        return deck
    return shuffle


def body_hash(body: Any) -> str:
    """Return the hash of a request body's JSON value, independent of key order and spacing."""
    return hashlib.sha256(ev.canonical_json(body)).hexdigest()


def no_such_game(game_id: str) -> problems.Problem:
    """Return the 404 for an unknown game. It names the id only if it has a game id's shape,
    so that nothing else sent in its place (a token, say) is shown back (API.md "Errors")."""
    if GAME_ID.fullmatch(game_id):
        return problems.NotFound(f"there is no game {game_id!r}")
    return problems.NotFound("there is no game with that id")


def idempotency_name(game_id: str, seat: int, key: str) -> str:
    """Return the store's name for a seat's Idempotency-Key record (in the game's slot)."""
    return f"game:{{{game_id}}}:idem:{seat}:{body_hash({'k': key})}"


class Games:
    """The game service's use cases over an event store, a turn queue and a clock."""

    def __init__(self, store: EventStore, queue: TurnQueue, clock: Callable[[], str]) -> None:
        self.store, self.queue, self.clock = store, queue, clock
        self._states: Lru[GameState] = Lru(CACHED_GAMES)  # each lent to one request at a time
        self._metas: Lru[Meta] = Lru(CACHED_GAMES)
        self._tables: Versioned[dict[str, Any]] = Versioned(CACHED_GAMES)  # read only

    def create(self, players: list[dict[str, Any]], rules: dict[str, Any],
               seed: int | None) -> Created:
        """Create a game, deal hand 1 and return each human seat's token."""
        game_id = new_game_id()
        state, events = create_game(players, rules, deck_source(seed), self.clock())
        tokens = {s: new_token(game_id) for s, p in enumerate(players) if p["kind"] == "human"}
        meta = {f"token:{s}": token_hash(t) for s, t in tokens.items()}
        meta["seed"] = "" if seed is None else str(seed)
        self.store.create(game_id, events, meta)
        self._after_append(game_id, state)
        return Created(game_id, state, tokens)

    def seat_for(self, game_id: str, token: str | None, required: bool) -> int | None:
        """Return the caller's seat: 404 unknown game, 401 bad token, 403 another game's token.

        Tokens are found by their SHA-256, which says nothing of the token it was made from."""
        meta = self.require_game(game_id)
        if token is None:
            if required:
                raise problems.Unauthorized("send Authorization: Bearer <seat token>")
            return None
        digest = token_hash(token)
        seat = meta.seats.get(digest)
        if seat is not None:
            return seat
        other = self._meta(token_game(token))
        if other is not None and digest in other.seats:
            raise problems.Forbidden("this token is a seat token of another game")
        raise problems.Unauthorized("the token is not a seat token of this game")

    def require_game(self, game_id: str) -> Meta:
        """Return the game's meta (seats' token hashes, seed), or 404 if there is no such game."""
        meta = self._meta(game_id)
        if meta is None:
            raise no_such_game(game_id)
        return meta

    def load(self, game_id: str) -> GameState:
        """Rebuild the game's state: a cached state or the latest snapshot, then later events."""
        with metrics.REPLAY_SECONDS.time():
            cached = self._states.take(game_id)
            if cached is not None:
                return replay(self.store.read(game_id, after=cached.version), cached)
            snapshot, events = self.store.load(game_id)
            if snapshot is None and not events:
                raise no_such_game(game_id)
            state = GameState.from_dict(snapshot["state"]) if snapshot else GameState()
            return replay(events, state)

    def current_view(self, game_id: str, seat: int | None) -> dict[str, Any]:
        """Return the state as `seat` sees it, re-queueing a lost AI turn on the way."""
        state = self.load(game_id)
        shown = self._view(game_id, state, seat)
        self._heal(game_id, state)
        self._keep(game_id, state)  # given back last: another request may then change it
        return shown

    def view_at(self, game_id: str, seat: int | None, version: int) -> dict[str, Any]:
        """Return the state as it was after event `version`, rebuilt by replay (R26)."""
        current = self.store.version(game_id)
        if current == 0:
            raise no_such_game(game_id)
        if not 1 <= version <= current:
            raise problems.NotFound(f"version {version} is not in 1..{current}")
        return self._view(game_id, replay(self.store.read(game_id, 0, version)), seat)

    def events(self, game_id: str, seat: int | None, after: int) -> list[ev.Event]:
        """Return the log after `after`, redacted for `seat` until the match has ended (R25)."""
        finished = self.progress(game_id)[1] == "finished"
        return visible_log(self.store.read(game_id, after), seat, finished)

    def export(self, game_id: str) -> list[ev.Event]:
        """Return the complete log of an ended match (409 before it ends)."""
        if self.progress(game_id)[1] != "finished":
            raise problems.Conflict("the export is available once the match has ended")
        return self.store.read(game_id)

    def progress(self, game_id: str) -> tuple[int, str]:
        """Return the game's version and status (`playing`, `finished`), re-queueing a lost
        AI turn on the way (the log's readers and a waiting stream call it)."""
        state = self.load(game_id)
        self._heal(game_id, state)
        self._keep(game_id, state)
        return state.version, state.status

    def move(self, game_id: str, seat: int, body: dict[str, Any],
             if_match: frozenset[int] | None, key: str | None) -> dict[str, Any]:
        """Apply a seat's move (honouring If-Match and Idempotency-Key); return the new view."""
        if key is None:
            return self._move(game_id, seat, body, if_match, None)
        name, digest = idempotency_name(game_id, seat, key), body_hash(body)
        record = self.store.idempotency_begin(name, digest)
        if record is not None:
            return self._replay_answer(game_id, seat, record, digest)
        try:
            return self._move(game_id, seat, body, if_match, (name, digest))
        except problems.Problem as problem:
            self._record_problem(name, digest, problem)
            raise
        except BaseException:
            self.store.idempotency_abort(name)
            raise

    def refuse_move(self, game_id: str, seat: int, key: str, digest: str,
                    problem: problems.Problem) -> dict[str, Any]:
        """Answer a move whose body could not be read (400) but which names an Idempotency-Key:
        as the key's first answer if it has one (409 while pending, 422 for another body),
        else by raising `problem`, kept as the key's answer; `digest` is the body's hash."""
        name = idempotency_name(game_id, seat, key)
        record = self.store.idempotency_begin(name, digest)
        if record is not None:
            return self._replay_answer(game_id, seat, record, digest)
        self._record_problem(name, digest, problem)
        raise problem

    def _record_problem(self, name: str, digest: str, problem: problems.Problem) -> None:
        answer = {"state": "done", "body_hash": digest, "problem": problem.body()}
        self.store.idempotency_finish(name, json.dumps(answer))

    def ai_turn(self, game_id: str, version: int, choose: Chooser) -> bool:
        """Play the AI seat's turn due at `version`; False if the game has moved on."""
        state = self.load(game_id)
        if state.version != version or not self._ai_to_move(state):
            self._keep(game_id, state)
            return False
        seat = state.turn
        assert seat is not None
        hand_log = self.store.read(game_id, after=state.hand_seq - 1)
        try:
            self._commit(game_id, state, seat, choose(state, seat, hand_log).to_dict(), None)
        except ConcurrencyError:
            metrics.APPEND_CONFLICTS.inc()
            return False
        self._keep(game_id, state)
        return True

    def _move(self, game_id: str, seat: int, body: dict[str, Any],
              if_match: frozenset[int] | None,
              idem: tuple[str, str] | None) -> dict[str, Any]:
        """Decide the move where it arrived: on the log as it is now or, with If-Match, on the
        cached state first, if at that version (the append's version check catches a cache
        behind the log). A move another one beat to the append lands nowhere (API.md: two
        moves that race for the same seat and version never both land): 412 with If-Match,
        else 409, even if the seat is to move again by then."""
        cached = self._states.take(game_id) if if_match is not None else None
        if cached is not None:
            try:
                return self._try_move(game_id, cached.clone(), seat, body, if_match, idem)
            except (problems.Problem, ConcurrencyError):
                self._keep(game_id, cached)  # right at its version: `load` catches it up
        try:
            return self._try_move(game_id, self.load(game_id), seat, body, if_match, idem)
        except ConcurrencyError as race:
            metrics.APPEND_CONFLICTS.inc()
            if if_match is not None:
                raise problems.PreconditionFailed(
                    "another move landed first", version=race.current_version) from race
            raise problems.RaceLost("another move of this seat landed first",
                                    version=race.current_version) from race

    def _try_move(self, game_id: str, state: GameState, seat: int, body: dict[str, Any],
                  if_match: frozenset[int] | None,
                  idem: tuple[str, str] | None) -> dict[str, Any]:
        """Check If-Match (the versions it names), decide and append the move on `state`;
        return the seat's new view."""
        if if_match is not None and state.version not in if_match:
            raise problems.PreconditionFailed(
                f"the game is at version {state.version}", version=state.version)
        self._commit(game_id, state, seat, body, idem)
        shown = self._view(game_id, state, seat)
        self._keep(game_id, state)
        return shown

    def _commit(self, game_id: str, state: GameState, seat: int, body: dict[str, Any],
                idem: tuple[str, str] | None) -> None:
        """Decide the move on `state`, append its events atomically and queue any AI turn."""
        expected = state.version
        events = self._decide(game_id, state, seat, body)
        record = None if idem is None else (idem[0], json.dumps(
            {"state": "done", "body_hash": idem[1], "version": state.version}))
        self.store.append(game_id, expected, events, idempotency=record,
                          snapshot=self._snapshot_if_dealt(state, events))
        self._after_append(game_id, state)

    def _decide(self, game_id: str, state: GameState, seat: int,
                body: dict[str, Any]) -> list[ev.Event]:
        try:
            move = Move.from_dict(body)
            return make_move(state, seat, move, self._shuffle(game_id), self.clock())
        except RuleError as error:
            legal = own(state, seat).get("legal_moves", [])
            raise problems.from_rule_error(error, legal) from error

    def _shuffle(self, game_id: str) -> Callable[[int], Sequence[Tile]]:
        """Return the game's deck source; its seed is read only when a hand is dealt."""
        def shuffle(hand_number: int) -> Sequence[Tile]:
            seed = self.require_game(game_id).seed
            return deck_source(int(seed) if seed else None)(hand_number)
        return shuffle

    def _replay_answer(self, game_id: str, seat: int, record: dict[str, Any],
                       digest: str) -> dict[str, Any]:
        if record.get("body_hash") != digest:
            raise problems.IdempotencyMismatch("this Idempotency-Key was sent with another body")
        if record.get("state") == "pending":
            raise problems.Conflict("a request with this Idempotency-Key is still being handled")
        if "problem" in record:
            raise problems.Problem.replayed(record["problem"])
        return self.view_at(game_id, seat, record["version"])

    def _heal(self, game_id: str, state: GameState) -> None:
        """Queue the AI turn due now again if its job is lost (see TurnQueue.heal_turn)."""
        if self._ai_to_move(state):
            self.queue.heal_turn(game_id, state.version)

    def _after_append(self, game_id: str, state: GameState) -> None:
        if self._ai_to_move(state):
            self.queue.enqueue_turn(game_id, state.version)

    @staticmethod
    def _ai_to_move(state: GameState) -> bool:
        turn = state.turn
        return turn is not None and state.players[turn]["kind"] == "ai"

    def _meta(self, game_id: str) -> Meta | None:
        meta = self._metas.get(game_id)
        if meta is None:
            stored = self.store.meta(game_id)
            if not stored:
                return None
            meta = Meta.parse(stored)
            self._metas.put(game_id, meta)
        return meta

    def _keep(self, game_id: str, state: GameState) -> None:
        """Give back a state that matches the log, for the next request to build on."""
        self._states.put(game_id, state)

    def _view(self, game_id: str, state: GameState, seat: int | None) -> dict[str, Any]:
        """Return the state as `seat` sees it; the part every seat sees is built once a version."""
        shared = self._tables.get(game_id, state.version,
                                  lambda: {"game_id": game_id, **table(state)})
        return {**shared, **own(state, seat)}

    @staticmethod
    def _snapshot(state: GameState) -> dict[str, Any]:
        return {"version": state.version, "state": state.to_dict()}

    def _snapshot_if_dealt(self, state: GameState,
                           events: list[ev.Event]) -> dict[str, Any] | None:
        dealt = any(e["type"] == ev.HAND_STARTED for e in events)
        return self._snapshot(state) if dealt else None

