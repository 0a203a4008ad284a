"""The use cases over the in-memory event store and a fake turn queue: no server, no HTTP."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from service.game import events as ev
from service.game.state import GameState
from service.game.views import view
from service.rules.moves import Move
from service.rules.tiles import TILES
from service.usecases import errors, idempotency
from service.usecases.decks import Dealer
from service.usecases.following import Turn
from service.usecases.games import Games
from service.usecases.seat_views import View
from service.usecases.tokens import token_hash
from tests.memory_store import InMemoryEventStore

AT = "2024-05-01T12:00:00.000Z"
HUMANS = [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}]
AIS = [{"name": "A0", "kind": "ai", "level": "random"},
       {"name": "A1", "kind": "ai", "level": "random"}]
RULES = {"hands": 1, "opening": "draw"}
SECRET = b"the tests' deck secret"


class FakeTurnQueue:
    """A TurnQueue that records each call: ("enqueue" | "heal", game id, version)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def enqueue_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Record a queued turn."""
        self.calls.append(("enqueue", game_id, version))

    def heal_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Record a healed turn."""
        self.calls.append(("heal", game_id, version))


@pytest.fixture
def store() -> InMemoryEventStore:
    """An empty in-memory event store."""
    return InMemoryEventStore()


@pytest.fixture
def queue() -> FakeTurnQueue:
    """A turn queue that only records."""
    return FakeTurnQueue()


@pytest.fixture
def games(store: InMemoryEventStore, queue: FakeTurnQueue) -> Games:
    """The use cases over the store and the queue, with a fixed clock; seeds are honoured,
    as the tests' settings have it."""
    return Games(store, queue, lambda: AT, dealer=Dealer(seeded=True, secret=lambda: SECRET))


@pytest.fixture
def humans(games: Games) -> tuple[str, dict[int, str]]:
    """A two-human game (seed 7): its id and seat tokens."""
    created = games.create(HUMANS, RULES, 7)
    return created.game_id, created.tokens


def to_move(games: Games, game_id: str) -> tuple[int, int, dict[str, Any]]:
    """Return the game's version, the seat to move and that seat's first legal move."""
    shown = games.current_view(game_id, None).table
    seat = shown.fields["turn"]
    return shown.version, seat, games.current_view(game_id, seat).own["legal_moves"][0]


def first_legal(state: GameState, seat: int, _log: list[ev.Event], _left_s: float) -> Move:
    """An AI chooser: the seat's first legal move."""
    return Move.from_dict(view(state, seat)["legal_moves"][0])


# Creation ------------------------------------------------------------------

def test_creation_deals_hand_1_and_keeps_only_the_hashes_of_human_seats_tokens(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue) -> None:
    created = games.create(HUMANS, RULES, 7)
    assert set(created.tokens) == {0, 1}
    assert store.version(created.game_id) == created.state.version >= 2
    assert [e["type"] for e in store.read(created.game_id)][:2] == [ev.GAME_CREATED,
                                                                     ev.HAND_STARTED]
    meta = store.meta(created.game_id)
    assert meta == {"token:0": token_hash(created.tokens[0]),
                    "token:1": token_hash(created.tokens[1]), "seed": "7",
                    "variant": "spinner"}
    assert queue.calls == []  # no AI seat


def test_an_ai_seat_to_move_after_creation_has_its_turn_queued(
        games: Games, queue: FakeTurnQueue) -> None:
    created = games.create(AIS, RULES, 7)
    assert created.tokens == {}
    assert queue.calls == [("enqueue", created.game_id, created.state.version)]


# Tokens -------------------------------------------------------------------

def test_a_seat_token_names_its_seat_and_no_token_a_spectator(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, tokens = humans
    assert games.seat_for(game_id, tokens[1], required=True) == 1
    assert games.seat_for(game_id, None, required=False) is None
    with pytest.raises(errors.TokenMissing):
        games.seat_for(game_id, None, required=True)


def test_a_bad_token_and_another_games_token_are_refused_apart(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, tokens = humans
    other = games.create(HUMANS, RULES, 8)
    with pytest.raises(errors.BadToken):
        games.seat_for(game_id, f"{game_id}.forged", required=True)
    with pytest.raises(errors.OtherGamesToken):
        games.seat_for(game_id, other.tokens[0], required=True)


def test_an_unknown_game_is_no_such_game_naming_nothing_sent(games: Games) -> None:
    details = set()
    for sent in ("0123456789abcdef", "a-token.that-was-sent-as-an-id", "x}y"):
        reads = (functools.partial(games.current_view, sent, None),
                 functools.partial(games.export, sent), functools.partial(games.require_game, sent))
        for read in reads:
            with pytest.raises(errors.NoSuchGame) as refused:
                read()
            details.add(refused.value.detail)
    assert details == {"there is no game with that id"}


# Moves and If-Match --------------------------------------------------------

def test_a_move_with_if_match_on_the_current_version_lands(
        games: Games, store: InMemoryEventStore, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    shown = games.move(game_id, seat, move, frozenset({version}), None)
    assert shown.table.version == store.version(game_id) > version
    assert shown.own["seat"] == seat
    assert store.read(game_id, version)[0]["seat"] == seat


def test_a_move_with_if_match_on_another_version_is_a_mismatch_naming_the_version(
        games: Games, store: InMemoryEventStore, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    with pytest.raises(errors.VersionMismatch) as refused:
        games.move(game_id, seat, move, frozenset({version - 1}), None)
    assert refused.value.version == version
    assert store.version(game_id) == version


@pytest.mark.parametrize(("if_match", "lost"), [
    (False, errors.RaceLost), (True, errors.VersionMismatch)])
def test_of_two_moves_decided_on_one_version_the_second_lands_nowhere(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue,
        humans: tuple[str, dict[int, str]], monkeypatch: pytest.MonkeyPatch,
        if_match: bool, lost: type[errors.AtVersion]) -> None:
    """API.md: two moves that race for the same seat and version never both land."""
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    rival, append = Games(store, queue, lambda: AT), store.append

    def rival_lands_first(*args: Any, **kwargs: Any) -> None:
        monkeypatch.setattr(store, "append", append)
        rival.move(game_id, seat, move, None, None)  # decided on the same version
        append(*args, **kwargs)

    monkeypatch.setattr(store, "append", rival_lands_first)
    with pytest.raises(lost) as refused:
        games.move(game_id, seat, move, frozenset({version}) if if_match else None, None)
    landed = store.version(game_id)
    assert refused.value.version == landed > version
    assert [e["seat"] for e in store.read(game_id, version)].count(seat) == landed - version


def test_a_rule_error_is_refused_with_its_rule_r2_r4_r16(
        games: Games, store: InMemoryEventStore, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    with pytest.raises(errors.OutOfTurn) as out_of_turn:  # R4: the other seat is to move
        games.move(game_id, 1 - seat, move, None, None)
    assert out_of_turn.value.extra == {"rule": "R4"}
    with pytest.raises(errors.MalformedMove) as malformed:  # R2: no such tile
        games.move(game_id, seat, {"action": "play", "tile": "7-X"}, None, None)
    assert malformed.value.extra["errors"][0]["field"] == "tile"
    own = games.current_view(game_id, seat).own
    absent = next(t.text for t in TILES if t.text not in own["hand"])  # decks are random
    with pytest.raises(errors.IllegalMove) as illegal:  # R16: a tile the seat does not hold
        games.move(game_id, seat, {"action": "play", "tile": absent}, None, None)
    assert illegal.value.extra == {"rule": "R16", "legal_moves": own["legal_moves"]}
    assert store.version(game_id) == version


# Idempotency-Key -----------------------------------------------------------

def test_a_key_sent_again_with_the_same_body_answers_the_same_view_and_appends_nothing(
        games: Games, store: InMemoryEventStore, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    first = games.move(game_id, seat, move, None, "key-1")
    landed = store.version(game_id)
    again = games.move(game_id, seat, dict(reversed(move.items())), None, "key-1")
    assert again.table.version == first.table.version == landed > version
    assert again.table.fields == first.table.fields and again.own == first.own
    assert store.version(game_id) == landed


def test_a_key_sent_again_with_another_body_is_refused_as_reused(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    _, seat, move = to_move(games, game_id)
    games.move(game_id, seat, move, None, "key-1")
    with pytest.raises(errors.KeyReused):
        games.move(game_id, seat, {"action": "pass"}, None, "key-1")


def test_a_key_whose_first_request_is_still_running_is_pending(
        games: Games, store: InMemoryEventStore, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    first = idempotency.new_claim(game_id, seat, "key-1", idempotency.body_hash(move))
    assert store.idempotency_begin(first) is None
    with pytest.raises(errors.KeyPending):
        games.move(game_id, seat, move, None, "key-1")
    assert store.version(game_id) == version


def test_a_refused_move_under_a_key_is_refused_again_alike_by_any_process(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue,
        humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    with pytest.raises(errors.OutOfTurn) as first:
        games.move(game_id, 1 - seat, move, None, "key-1")
    games.move(game_id, seat, move, None, None)  # now the other seat is to move (or a deal)
    another_process = Games(store, queue, lambda: AT)
    with pytest.raises(errors.OutOfTurn) as again:
        another_process.move(game_id, 1 - seat, move, None, "key-1")
    assert (again.value.detail, again.value.extra) == (first.value.detail, first.value.extra)


def test_an_unreadable_body_under_a_key_is_kept_as_the_keys_answer(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    _, seat, _ = to_move(games, game_id)
    refusal = errors.InvalidRequest("the body is not JSON",
                                    errors=[{"field": "body", "message": "not JSON"}])
    with pytest.raises(errors.InvalidRequest):
        games.refuse_move(game_id, seat, "key-1", "digest-of-the-bytes", refusal)
    with pytest.raises(errors.InvalidRequest) as again:
        games.refuse_move(game_id, seat, "key-1", "digest-of-the-bytes", refusal)
    assert again.value is not refusal
    assert (again.value.detail, again.value.extra) == (refusal.detail, refusal.extra)
    with pytest.raises(errors.KeyReused):
        games.refuse_move(game_id, seat, "key-1", "digest-of-other-bytes", refusal)


# Reading, healing and AI turns --------------------------------------------

def test_reading_a_game_with_an_ai_seat_to_move_heals_its_turn_at_that_version(
        games: Games, queue: FakeTurnQueue) -> None:
    created = games.create(AIS, RULES, 7)
    queue.calls.clear()
    games.current_view(created.game_id, None)
    games.events(created.game_id, None, 0)
    assert queue.calls == [("heal", created.game_id, created.state.version)] * 2


def test_reading_a_game_with_a_human_to_move_heals_nothing(
        games: Games, queue: FakeTurnQueue, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    games.current_view(game_id, 0)
    games.events(game_id, 0, 0)
    assert queue.calls == []


def test_an_ai_turn_at_a_stale_version_does_nothing(
        games: Games, store: InMemoryEventStore) -> None:
    created = games.create(AIS, RULES, 7)
    version = created.state.version

    def never(*_: Any) -> Move:
        raise AssertionError("a stale turn chose a move")

    assert games.ai_turn(created.game_id, version - 1, never) is False
    assert store.version(created.game_id) == version


def test_an_ai_turn_the_game_moved_past_heals_the_turn_due_now(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue) -> None:
    """The job that played a turn may die before it queues the next (Redis went away) and be
    run again: finding the game moved on, it heals the turn due now (a game of AI seats
    nobody reads would wait for good)."""
    created = games.create(AIS, RULES, 7)
    assert games.ai_turn(created.game_id, created.state.version, first_legal) is True
    queue.calls.clear()
    assert games.ai_turn(created.game_id, created.state.version, first_legal) is False
    assert queue.calls == [("heal", created.game_id, store.version(created.game_id))]


def test_an_ai_turn_at_the_current_version_plays_and_queues_the_next(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue) -> None:
    created = games.create(AIS, RULES, 7)
    queue.calls.clear()
    assert games.ai_turn(created.game_id, created.state.version, first_legal) is True
    landed = store.version(created.game_id)
    assert landed > created.state.version
    assert queue.calls == [("enqueue", created.game_id, landed)]


def test_the_export_of_a_match_not_ended_is_refused(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    with pytest.raises(errors.NotFinished):
        games.export(game_id)


def test_a_version_outside_the_log_is_no_such_version(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    version, _, _ = to_move(games, game_id)
    assert games.view_at(game_id, None, 1).table.fields["hand_number"] is None
    with pytest.raises(errors.NoSuchVersion, match=f"1..{version}"):
        games.view_at(game_id, None, version + 1)


def test_the_table_is_built_once_a_version_and_shared_by_every_seat(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    game_id, _ = humans
    tables = [games.current_view(game_id, seat).table for seat in (None, 0, 1)]
    assert tables[0] is tables[1] is tables[2]


def test_following_shows_each_event_redacted_for_the_seat_then_quiet_heals(
        games: Games, queue: FakeTurnQueue) -> None:
    """R25: until the match ends a follower sees no other seat's dealt tiles."""
    created = games.create(AIS, RULES, 7)
    queue.calls.clear()
    followed = games.follow(created.game_id, 0, 0, 0.01)
    assert followed is not None
    created_event, dealt = next(followed), next(followed)
    assert created_event is not None and dealt is not None
    assert created_event["type"] == ev.GAME_CREATED and "hash" not in created_event
    assert dealt["data"]["hands"][0] is not None and dealt["data"]["hands"][1] is None
    assert "deck" not in dealt["data"]
    searched, turn = next_batch(followed)
    assert len(searched) == created.state.version - 2  # R9; then where the game stands,
    assert all(e["data"]["reason"] == "search" for e in searched)
    standing = games.current_view(created.game_id, None).table.fields
    assert turn == Turn(created.state.version, standing["turn"], "playing")
    assert next(followed) is None  # then nothing came: the AI turn is healed meanwhile
    assert queue.calls[-1] == ("heal", created.game_id, created.state.version)


def next_batch(followed: Any) -> tuple[list[ev.Event], Turn]:
    """Return the events a follower gets next, up to the Turn that ends their batch."""
    sent = []
    for item in followed:
        if isinstance(item, Turn):
            return sent, item
        assert item is not None, "nothing came"
        sent.append(item)
    raise AssertionError("the follow ended")


def test_following_tells_after_each_append_whose_turn_it_is_and_at_which_version(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    """A follower learns the version and the seat to move after every append, as the state
    shows them, without reading the state: first where the game stands (nothing to send
    yet), then after each move's events."""
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    followed = games.follow(game_id, 1, version, 0.01)
    assert followed is not None
    assert next_batch(followed) == ([], Turn(version, seat, "playing"))
    for _ in range(4):
        games.move(game_id, seat, move, None, None)
        sent, turn = next_batch(followed)
        assert [e["seq"] for e in sent] == list(range(version + 1, turn.version + 1))
        version, seat, move = to_move(games, game_id)
        assert turn == Turn(version, seat, "playing")


def test_following_with_state_sends_after_each_turn_the_seats_view_then(
        games: Games, humans: tuple[str, dict[int, str]]) -> None:
    """One request a move (issue 21): after each Turn comes the follower's View at that
    version, as a read of the state shows it to that seat (R25), so it needs no read."""
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    followed = games.follow(game_id, 1, version, 0.01, with_state=True)
    assert followed is not None
    for _ in range(3):
        turn, shown = next_batch_events(followed), next(followed)
        assert turn.version == version
        now = games.current_view(game_id, 1)
        assert isinstance(shown, View) and shown.table is now.table and shown.own == now.own
        assert shown.own["seat"] == 1 and (shown.own["legal_moves"] != []) == (seat == 1)
        games.move(game_id, seat, move, None, None)
        version, seat, move = to_move(games, game_id)


def next_batch_events(followed: Any) -> Turn:
    """Skip the events a follower gets next; return the Turn that ends their batch (a
    follower with state sends its View next)."""
    while not isinstance(item := next(followed), Turn):
        assert item is not None, "nothing came"
    return item


def test_a_follower_leaves_its_state_for_the_processs_next_move(
        games: Games, humans: tuple[str, dict[int, str]], monkeypatch: Any) -> None:
    """A move with If-Match on a state frame finds its state kept at that version, though
    another process made the move before: the stream that sent the frame kept its state,
    so the move reads no events from the store."""
    game_id, _ = humans
    version, seat, move = to_move(games, game_id)
    followers = [games.follow(game_id, s, version, 0.01, with_state=True) for s in (0, 1)]
    for followed in followers:
        next_batch_events(followed)
        next(followed)  # the View where the game stands
    elsewhere = Games(games.ctx.store, games.ctx.queue, games.ctx.clock)  # another process
    elsewhere.move(game_id, seat, move, None, None)
    shown = []
    for followed in followers:
        next_batch_events(followed)
        shown.append(next(followed))
    mover = next(v for v in shown if v.own["legal_moves"])
    for name in ("read_known", "load", "read"):
        monkeypatch.setattr(games.ctx.store, name, functools.partial(no_read, name))
    shown = games.move(game_id, mover.own["seat"], mover.own["legal_moves"][0],
                       frozenset({mover.table.version}), None)
    assert shown.table.version > mover.table.version


def no_read(name: str, *_args: Any) -> None:
    """Stands for a store's read that a test says must not happen."""
    raise AssertionError(f"the store was read ({name})")


def test_following_an_ended_match_sends_the_rest_whole_then_is_over(games: Games) -> None:
    """R25: once the match has ended its log is public; a follower who has every event gets
    None, no stream (the API answers 204 so that a browser stops reconnecting)."""
    created = games.create(AIS, RULES, 7)
    view = games.current_view(created.game_id, None)
    while view.table.fields["status"] == "playing":
        assert games.ai_turn(created.game_id, view.table.version, first_legal)
        view = games.current_view(created.game_id, None)
    end = view.table.version
    rest = games.follow(created.game_id, 1, end - 2, 0.01)
    assert rest is not None
    assert list(rest) == [*games.export(created.game_id)[end - 2:],  # unredacted: hashes too
                          Turn(end, None, "finished")]
    assert games.follow(created.game_id, 1, end, 0.01) is None
    assert games.follow(created.game_id, 1, end + 5, 0.01) is None  # beyond the log: as at it
