"""The memoized lists of the state schema dump what plain marshmallow lists would."""

import random

import pytest
from marshmallow import fields

from service.api import schemas
from service.game.views import view

from .positions import play_randomly, shuffled, start_from


class PlainLayout(schemas.LayoutOut):
    tiles = fields.List(fields.Nested(schemas.PlacedTileOut))
    ends = fields.List(fields.Nested(schemas.EndOut))


class PlainState(schemas.StateOut):
    layout = fields.Nested(PlainLayout)
    players = fields.List(fields.Nested(schemas.PlayerOut))
    legal_moves = fields.List(fields.Nested(schemas.MoveOut))


def views_of_a_played_match(seed: int) -> list[dict]:
    """Every seat's view after every move of a random match of three hands."""
    match = start_from(shuffled(seed), 3, rules={"hands": 3, "opening": "draw"})
    seen: list[dict] = []
    play_randomly(match, random.Random(seed),
                  each=lambda m: seen.extend(view(m.state, s) for s in range(3)))
    return seen


@pytest.mark.parametrize("memo_limit", [schemas.MEMO_LIMIT, 5])
def test_interned_lists_dump_as_plain_lists_do(monkeypatch, memo_limit):
    monkeypatch.setattr(schemas, "MEMO_LIMIT", memo_limit)  # 5: the memo starts afresh often
    interned, plain = schemas.StateOut(), PlainState()
    seen = views_of_a_played_match(seed=11)
    assert len(seen) > 100 and any(v["legal_moves"] for v in seen)
    for shown in seen:
        assert interned.dump(shown) == plain.dump(shown)

