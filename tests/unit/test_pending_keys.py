"""An Idempotency-Key left pending by a process that died (issue 16, point 5): the retry is
served at once as that same request, over the in-memory store, whose siblings play the
other processes. A request that finds the key pending for a live process answers 409 at once
(API.md "Moves": the first is still being handled), with a Retry-After; a try after the key
was answered, released or its holder found dead is served. A process taken for dead whose
key was taken over appends nothing."""

from __future__ import annotations

from typing import Any

import pytest

from service.usecases import errors, idempotency
from service.usecases.games import Games
from service.usecases.idempotency import body_hash, new_claim
from service.usecases.ports import KeyClaim, StoreUnavailable
from tests.memory_store import InMemoryEventStore
from tests.unit import test_usecases
from tests.unit.test_usecases import AT, FakeTurnQueue, to_move

store, queue, games, humans = (test_usecases.store, test_usecases.queue, test_usecases.games,
                               test_usecases.humans)  # their fixtures, by these names here
KEY = "key-1"
Turn = tuple[str, int, int, dict[str, Any]]


@pytest.fixture
def turn(games: Games, humans: tuple[str, dict[int, str]]) -> Turn:
    """A two-human game's id, its version, the seat to move and that seat's first legal move."""
    game_id, _ = humans
    return (game_id, *to_move(games, game_id))


def moves_of(store: InMemoryEventStore, game_id: str, after: int) -> list[dict[str, Any]]:
    """Return the events after version `after` that a seat's move made (play, draw, pass)."""
    return [e for e in store.read(game_id, after)
            if e["type"] in ("tile_played", "tile_drawn", "passed")]


def claim_of(turn: Turn) -> KeyClaim:
    """Return a new request's claim of KEY for the turn's move."""
    game_id, _, seat, move = turn
    return new_claim(game_id, seat, KEY, body_hash(move))


def left_pending(store: InMemoryEventStore, game_id: str, seat: int,
                 move: dict[str, Any]) -> InMemoryEventStore:
    """Claim KEY for `move` as another process's request does, and return that process."""
    other = store.sibling()
    assert other.idempotency_begin(claim_of((game_id, 0, seat, move))) is None
    return other


def test_a_key_left_pending_by_a_dead_process_is_taken_over_at_once(
        games: Games, store: InMemoryEventStore, turn: Turn) -> None:
    game_id, version, seat, move = turn
    left_pending(store, game_id, seat, move).close()  # SIGKILLed after its claim
    landed = games.move(game_id, seat, move, None, KEY)
    assert landed.table.version == store.version(game_id) > version
    assert len(moves_of(store, game_id, version)) == 1
    again = games.move(game_id, seat, move, None, KEY)  # and it is the key's answer now
    assert again.table.version == landed.table.version == store.version(game_id)


def test_a_key_pending_for_a_live_process_answers_409_at_once(
        games: Games, store: InMemoryEventStore, turn: Turn) -> None:
    """Its first request is still being handled (API.md "Moves"): no wait for it."""
    game_id, version, seat, move = turn
    left_pending(store, game_id, seat, move)  # its request is still running
    with pytest.raises(errors.KeyPending) as refused:
        games.move(game_id, seat, move, None, KEY)
    assert refused.value.extra == {"retry_after": idempotency.RETRY_PENDING_S}
    assert store.version(game_id) == version


@pytest.mark.parametrize("meanwhile", ["dies", "releases it", "answers it"])
def test_a_try_after_a_live_process_let_its_key_go_is_served_once(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue, turn: Turn,
        meanwhile: str) -> None:
    """While the holder runs, a try gets 409; then the holder is SIGKILLed (and its liveness
    runs out), its request fails and releases the key (as a later beat does after a 503),
    or its request lands the move: the next try is served as that same request, and the
    move lands once."""
    game_id, version, seat, move = turn
    holder = store.sibling()
    held = claim_of(turn)
    assert holder.idempotency_begin(held) is None
    with pytest.raises(errors.KeyPending):
        games.move(game_id, seat, move, None, KEY)

    def answer() -> None:
        holder.idempotency_abort(held)
        Games(holder, queue, lambda: AT).move(game_id, seat, move, None, KEY)

    {"dies": holder.close, "releases it": lambda: holder.idempotency_abort(held),
     "answers it": answer}[meanwhile]()
    served = games.move(game_id, seat, move, None, KEY)
    assert served.table.version == store.version(game_id) > version
    assert len(moves_of(store, game_id, version)) == 1


def test_a_dead_processs_key_is_not_taken_over_for_another_body(
        games: Games, store: InMemoryEventStore, turn: Turn) -> None:
    game_id, version, seat, move = turn
    left_pending(store, game_id, seat, move).close()
    with pytest.raises(errors.KeyReused):
        games.move(game_id, seat, {"action": "pass"}, None, KEY)
    assert store.version(game_id) == version


def test_a_dead_processs_move_that_landed_is_answered_as_it_landed(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue, turn: Turn) -> None:
    """Its append wrote the key's final record in the same step: no pending record is left."""
    game_id, version, seat, move = turn
    other = store.sibling()
    landed = Games(other, queue, lambda: AT).move(game_id, seat, move, None, KEY)
    other.close()  # killed before its reply went out
    again = games.move(game_id, seat, move, None, KEY)
    assert again.table.version == landed.table.version == store.version(game_id)
    assert len(moves_of(store, game_id, version)) == 1


@pytest.mark.parametrize("if_match", [False, True])
def test_a_process_thought_dead_whose_key_was_taken_over_answers_as_the_taker(
        games: Games, store: InMemoryEventStore, queue: FakeTurnQueue, turn: Turn,
        monkeypatch: pytest.MonkeyPatch, if_match: bool) -> None:
    """It stalled after deciding its move, was taken for dead, and the retry landed the move:
    its own append loses the race, and the refusal it would give (412, or 409 without
    If-Match) is not kept nor answered; the move landed once, and both answer it."""
    game_id, version, seat, move = turn
    stalled = store.sibling()
    append = stalled.append
    taken: list[int] = []

    def late_append(*args: Any, **kwargs: Any) -> None:
        stalled.close()
        taken.append(games.move(game_id, seat, move, None, KEY).table.version)
        append(*args, **kwargs)

    monkeypatch.setattr(stalled, "append", late_append)
    versions = frozenset([version]) if if_match else None
    answered = Games(stalled, queue, lambda: AT).move(game_id, seat, move, versions, KEY)
    assert answered.table.version == taken[0] == store.version(game_id)
    assert len(moves_of(store, game_id, version)) == 1
    assert games.move(game_id, seat, move, None, KEY).table.version == taken[0]


def test_a_process_thought_dead_appends_nothing_once_its_key_is_taken_over(
        store: InMemoryEventStore, queue: FakeTurnQueue, turn: Turn,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """It stalled after deciding its move, was taken for dead, and a retry took its key over
    and still runs (it may append the same move, or has, at a later version): the stalled
    append lands nothing, and its answer is the key's now, 409 while the retry runs."""
    game_id, version, seat, move = turn
    stalled, retry = store.sibling(), claim_of(turn)
    append = stalled.append

    def late_append(*args: Any, **kwargs: Any) -> None:
        stalled.close()
        found = store.idempotency_begin(retry)
        assert found is not None and store.idempotency_begin(retry, orphan=found) is None
        append(*args, **kwargs)

    monkeypatch.setattr(stalled, "append", late_append)
    with pytest.raises(errors.KeyPending):
        Games(stalled, queue, lambda: AT).move(game_id, seat, move, None, KEY)
    assert store.version(game_id) == version
    assert store.idempotency_begin(retry) is None  # still the retry's claim


def test_a_refusal_that_cannot_be_kept_releases_its_key(
        games: Games, store: InMemoryEventStore, turn: Turn,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis went away as the refusal was being kept (503): the key is not left pending."""
    game_id, version, seat, move = turn

    def unavailable(*args: Any, **kwargs: Any) -> None:
        raise StoreUnavailable("redis: gone")

    with monkeypatch.context() as down:
        down.setattr(store, "idempotency_finish", unavailable)
        with pytest.raises(StoreUnavailable):
            games.move(game_id, 1 - seat, move, None, KEY)  # out of turn (R4)
    assert store.idempotency_begin(claim_of((game_id, version, 1 - seat, move))) is None
