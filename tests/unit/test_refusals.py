"""The use cases' refusals as the API answers them: one table, and replays alike."""

from __future__ import annotations

import json

from service.api.errors import ANSWERS, problem_for
from service.usecases import errors


def test_every_refusal_the_use_cases_raise_has_one_answer() -> None:
    raised = {kind for kind in errors.KINDS.values() if not kind.__subclasses__()}
    assert raised <= set(ANSWERS)
    assert errors.InvalidRequest in ANSWERS


def test_an_illegal_move_is_a_422_naming_its_rule_and_the_legal_moves() -> None:
    legal = [{"action": "draw", "tile": None, "end": None, "expose": None}]
    refusal = errors.IllegalMove("violates R15: play or draw", rule="R15", legal_moves=legal)
    assert problem_for(refusal).body() == {
        "type": "/problems/illegal-move", "title": "The rules forbid this move", "status": 422,
        "detail": "violates R15: play or draw", "rule": "R15", "legal_moves": legal}


def test_a_refusal_kept_by_an_idempotency_key_is_answered_again_to_the_byte() -> None:
    refusals = [errors.VersionMismatch("the game is at version 9", version=9),
                errors.MalformedMove("violates R2: not a tile \ud800",
                                     errors=[{"field": "tile", "message": "\ud800"}]),
                errors.OutOfTurn("violates R4: not your turn", rule="R4")]
    for refusal in refusals:
        kept = errors.Refusal.from_record(json.loads(json.dumps(refusal.to_record())))
        assert type(kept) is type(refusal)
        first, again = problem_for(refusal).body(), problem_for(kept).body()
        assert json.dumps(again) == json.dumps(first)
