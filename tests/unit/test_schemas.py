"""Answers are sent as built, with no dump step: each must be, byte for byte, what its response
schema's dump would make of it (the same keys, in the schema's order, the same values), so the
schemas that describe the answers (and openapi.yaml, which mirrors them) cannot drift from them.
"""

import random
from typing import Any

import orjson
from marshmallow import Schema

from service.api import schemas
from service.api.answers import to_json
from service.api.games import created_answer, state_body
from service.game.commands import create_game, make_move
from service.game.state import GameState
from service.game.views import own, table, visible_log
from service.rules.turns import legal_moves
from service.usecases.following import Turn
from service.usecases.games import Games
from service.usecases.stream_tickets import Ticket
from tests.memory_store import InMemoryEventStore

from .positions import AT, shuffles

STATE, EVENTS, EXPORT = schemas.StateOut(), schemas.EventsOut(), schemas.ExportOut()
EVENT, CREATED = schemas.EventOut(), schemas.CreatedOut()
BODY = {"seed": 3, "rules": {"opening": "next_lower", "hands": 2}, "players": [
    {"kind": "human", "name": "Ann"}, {"level": "random", "kind": "ai", "name": "Bot"},
    {"name": "Cy", "kind": "ai"}]}
"""A creation body, keys not in the schemas' order: the answer is in theirs all the same."""


def as_dumped(schema: Schema, answer: Any) -> bool:
    """Whether `answer`, sent as it is, is byte for byte what `schema.dump` makes of it."""
    return to_json(answer) == to_json(schema.dump(answer))


def seats(count: int) -> list[dict[str, Any]]:
    """Players as CreateGameIn loads them: a human, then AIs of two levels, by turns."""
    kinds = [{"kind": "human"}, {"kind": "ai", "level": "random"},
             {"kind": "ai", "level": "expert"}]
    return [{"name": f"P{s}", **kinds[s % 3]} for s in range(count)]


def self_played_views(seed: int) -> list[dict[str, Any]]:
    """Every seat's and a spectator's view, as the use cases build it (the shared table, then
    the seat's own part), after every move of a random match; the state is also rebuilt from
    its snapshot's JSON at each move, as a request after a hand start rebuilds it."""
    rng = random.Random(seed)
    count, opening = 2 + seed % 5, ("draw", "next_lower")[seed % 2]
    shuffle = shuffles(seed * 100)
    state, _ = create_game(seats(count), {"hands": 2, "opening": opening}, shuffle, AT)
    seen = []
    while state.status == "playing":
        stored = GameState.from_dict(orjson.loads(orjson.dumps(state.to_dict())))
        seen += [{"game_id": "g1", **table(shown), **own(shown, seat)}
                 for shown in (state, stored) for seat in [*range(count), None]]
        seat = state.turn
        assert seat is not None
        make_move(state, seat, rng.choice(legal_moves(state.hand, seat)), shuffle, AT)
    return seen


def test_every_view_of_self_played_matches_is_its_dump():
    seen = [shown for seed in range(6) for shown in self_played_views(seed)]
    assert len(seen) > 1000 and any(v.get("legal_moves") for v in seen)
    assert any("level" in p for v in seen for p in v["players"])  # an AI seat's level too
    for shown in seen:
        assert as_dumped(STATE, shown), shown


def test_a_view_with_a_key_out_of_the_schemas_order_is_not_its_dump():
    shown = self_played_views(1)[0]
    player = shown["players"][1]
    moved = {**shown, "players": [{**{k: v for k, v in player.items() if k != "level"},
                                   "level": player["level"]}]}
    assert "level" in player and not as_dumped(STATE, moved)
    assert not as_dumped(STATE, {**shown, "extra": 1})


class _NoQueue:
    """A turn queue that queues nothing: the test plays the AI seats itself."""

    def enqueue_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Queue nothing."""

    def heal_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Queue nothing."""


def test_every_answer_of_a_match_through_the_use_cases_is_its_dump():
    """Creation, each seat's view after each move (AIs' too), views at old versions, the
    redacted and the complete log, and each event as the stream sends it."""
    games, rng = Games(InMemoryEventStore(), _NoQueue(), lambda: AT), random.Random(3)
    body = schemas.CreateGameIn().load(BODY)
    created = games.create(body["players"], body["rules"], body["seed"])
    game_id = created.game_id
    answer = created_answer(game_id, created.state.version, body["players"], created.tokens)
    assert as_dumped(CREATED, answer) and answer["seats"][1]["level"] == "random"
    shown = state_body(games.current_view(game_id, None))
    while shown["status"] == "playing":
        answers = [state_body(games.current_view(game_id, seat)) for seat in (0, 1, 2, None)]
        assert all(as_dumped(STATE, a) for a in answers)
        if shown["turn"] == 0:
            move = rng.choice(answers[0]["legal_moves"])
            assert as_dumped(STATE, state_body(games.move(game_id, 0, move, None, None)))
        else:
            assert games.ai_turn(game_id, shown["version"], lambda state, seat, *_: rng.choice(
                legal_moves(state.hand, seat)))
        shown = state_body(games.current_view(game_id, None))
    versions = range(1, shown["version"] + 1)
    assert all(as_dumped(STATE, state_body(games.view_at(game_id, 0, v))) for v in versions)
    log = games.export(game_id)
    assert as_dumped(EXPORT, {"game_id": game_id, "events": log})
    for seat in (0, 1, None):
        redacted = visible_log(log, seat, finished=False)
        assert as_dumped(EVENTS, {"events": redacted})
        assert all(as_dumped(EVENT, event) for event in redacted)
    assert as_dumped(EVENTS, {"events": games.events(game_id, 1, 0)})



def test_a_streams_turn_and_a_stream_ticket_are_their_dumps():
    for turn in (Turn(7, 1, "playing"), Turn(1004, None, "finished")):
        assert as_dumped(schemas.StreamTurnOut(), turn.to_dict())
    ticket = Ticket("t0k3n", "2024-05-01T12:01:00.000Z")
    assert as_dumped(schemas.StreamTicketOut(), ticket.to_dict())
    assert not as_dumped(schemas.StreamTurnOut(), {"turn": 1, "version": 7, "status": "x"})
