"""The response schemas' compiled dump (service.api.dumping) gives what marshmallow's gives:
the same JSON text, key order and types included (True is not 1 there)."""

import random
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from marshmallow import Schema, fields, post_dump

from service.api import dumping, problems, schemas
from service.game.views import view, visible_log

from .positions import play_randomly, shuffled, start_from


class Hooked(schemas.OutSchema):
    """A schema with a post-dump hook, which only marshmallow's own dump runs."""

    name = fields.String()

    @post_dump
    def _shout(self, data: dict, **_: Any) -> dict:
        return {"name": data["name"].upper()}


def a_played_match(seed: int) -> tuple[list[dict], list[dict]]:
    """Every seat's and a spectator's view after every move of a random three-hand match,
    and the match's log."""
    match = start_from(shuffled(seed), 3, rules={"hands": 3, "opening": "draw"})
    seen: list[dict] = []
    play_randomly(match, random.Random(seed),
                  each=lambda m: seen.extend(view(m.state, s) for s in (0, 1, 2, None)))
    return [{"game_id": "g1", **shown} for shown in seen], match.events


def marshmallows(monkeypatch: pytest.MonkeyPatch, schema: Schema, obj: Any,
                 many: bool | None = None) -> bytes:
    """Return marshmallow's own dump of `obj` as JSON, nothing compiled (nested schemas too)."""
    with monkeypatch.context() as patched:
        patched.setattr(dumping, "compiled", lambda _schema: None)
        return orjson.dumps(schema.dump(obj, many=many))


def compiled(schema: Schema, obj: Any, many: bool | None = None) -> bytes:
    """Return the compiled dump of `obj` as JSON."""
    return orjson.dumps(schema.dump(obj, many=many))


def test_every_state_of_a_match_dumps_as_marshmallow_dumps_it(monkeypatch):
    seen, _ = a_played_match(seed=11)
    assert len(seen) > 100 and any(v.get("legal_moves") for v in seen)
    shapes = (schemas.StateOut(), schemas.StateOut(exclude=schemas.OWN_FIELDS),
              schemas.StateOut(only=schemas.OWN_FIELDS))
    for shown in seen:
        for schema in shapes:
            assert compiled(schema, shown) == marshmallows(monkeypatch, schema, shown)
    assert dumping.compiled(shapes[0]) is not None  # it was compiled, not marshmallow's


def test_logs_creations_problems_and_health_dump_as_marshmallow_dumps_them(monkeypatch):
    _, log = a_played_match(seed=5)
    answers = [
        (schemas.ExportOut(), {"game_id": "g1", "events": log}),
        (schemas.EventsOut(), {"events": visible_log(log, 1, finished=False)}),
        (schemas.CreatedOut(), {"game_id": "g1", "version": 2, "seats": [
            {"seat": 0, "name": "Ann", "kind": "human", "token": "t0"},
            {"seat": 1, "name": "Bot", "kind": "ai", "level": "expert"}]}),
        (schemas.ProblemOut(), problems.Unprocessable(
            "no", rule="R16", legal_moves=[{"action": "draw"}, {"action": "play", "tile": "1-S",
                                                                 "end": "e1", "expose": 4}]
        ).body()),
        (schemas.ProblemOut(), problems.BadRequest(
            "bad", errors=[{"field": "tile", "message": "not a tile"}]).body()),
        (schemas.HealthOut(), {"status": "ok", "store": "reachable"}),
    ]
    for schema, payload in answers:
        assert compiled(schema, payload) == marshmallows(monkeypatch, schema, payload)


@pytest.mark.parametrize("payload", [
    {},  # every key missing: each field left out
    {"version": None, "turn": None, "layout": None, "players": None, "hand": None},
    {"version": True, "turn": 2.0, "status": 7, "opening_double": b"9-9", "hand": [1, b"x"]},
    {"rules": {"hands": "3"}, "players": [{}], "layout": {"tiles": [{"end": None}]}},
    {"items": 1},  # a key named as a dict method: a field of that name would read it
    SimpleNamespace(version=4, status="playing", hand=["1-2"]),  # not a dict: read by attribute
])
def test_odd_values_dump_as_marshmallow_dumps_them(monkeypatch, payload):
    schema = schemas.StateOut()
    assert compiled(schema, payload) == marshmallows(monkeypatch, schema, payload)


def test_many_dumps_each_item_as_marshmallow_does(monkeypatch):
    schema = schemas.EndOut(many=True)
    ends = [{"id": "e1", "value": 3}, {"id": "e2", "value": "4"}]
    assert compiled(schema, ends) == marshmallows(monkeypatch, schema, ends) == orjson.dumps(
        [{"id": "e1", "value": 3}, {"id": "e2", "value": 4}])
    assert schemas.EndOut().dump(ends, many=True) == schema.dump(ends)


def test_a_schema_with_a_hook_or_an_unknown_field_is_left_to_marshmallow():
    class Renamed(schemas.OutSchema):
        name = fields.String(data_key="title")
        when = fields.DateTime()

    assert dumping.compiled(Hooked()) is None and dumping.compiled(Renamed()) is None
    assert Hooked().dump({"name": "ann"}) == {"name": "ANN"}
    assert Renamed().dump({"name": "ann"}) == {"title": "ann"}


def test_a_schema_nesting_one_left_to_marshmallow_is_compiled_around_it(monkeypatch):
    class Around(schemas.OutSchema):
        one = fields.Nested(Hooked)
        many = fields.Nested(Hooked, many=True)
        listed = fields.List(fields.Nested(Hooked))
        ends = fields.List(fields.Nested(schemas.EndOut), allow_none=True)

    schema = Around()
    payload = {"one": {"name": "a"}, "many": [{"name": "b"}], "listed": [{"name": "c"}, None],
               "ends": [{"id": "e1", "value": "2"}, None]}
    assert compiled(schema, payload) == marshmallows(monkeypatch, schema, payload)
    assert schema.dump(payload)["listed"] == [{"name": "C"}, None]
    assert dumping.compiled(schema) is not None and dumping.compiled(Hooked()) is None
