"""A variant is one folder and one registry entry: its record carries all the service asks
of it (rules, game, options, seats, AI), and the API and workers read only the record."""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Iterator
from typing import Any

import pytest
from marshmallow import ValidationError

from service.api import schemas
from service.game import allfives
from service.game.allfives.variant import VARIANT as ALL_FIVES
from service.game.state import GameState
from service.game.variant import Option
from service.game.variants import VARIANTS
from service.rules.moves import PASS, Move
from workers.ai import by_variant

MUGGINS = ALL_FIVES._replace(
    name="muggins", a_game="a Muggins game", seats=range(2, 4),
    options=(ALL_FIVES.options[0], Option("bonus", 0, "M3", "the bonus is 0 to 20", high=20)),
    ai=f"{__name__}:always_pass")
"""A made-up third variant: All Fives' target shared, an option of its own, its own AI."""


def always_pass(level: str, state: Any, seat: int, log: Any, rng: random.Random,
                budget_s: float) -> Move:
    """The made-up variant's AI: it passes."""
    return PASS


@pytest.fixture
def third_variant(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register MUGGINS for the test, and forget the AI entry points imported meanwhile."""
    monkeypatch.setitem(VARIANTS, MUGGINS.name, MUGGINS)  # type: ignore[index]
    by_variant.player_of.cache_clear()
    yield
    by_variant.player_of.cache_clear()


def test_all_fives_lives_in_one_folder_rules_game_and_record():
    record_modules = {f.__module__ for f in (ALL_FIVES.create_game, ALL_FIVES.make_move,
                                             ALL_FIVES.legal_moves, ALL_FIVES.evolve,
                                             ALL_FIVES.replay, ALL_FIVES.from_dict)}
    assert all(m.startswith("service.game.allfives.") for m in record_modules)
    folder = {m.name for m in pkgutil.iter_modules(allfives.__path__)}
    assert {"tiles", "hand", "turns", "scoring", "state", "commands", "variant"} <= folder
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("service.rules.allfives")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variants_ai_is_named_by_its_record_in_the_workers(name):
    module, _, function = VARIANTS[name].ai.partition(":")
    assert module.startswith("workers.ai.")  # the game layer names it; it cannot import it
    assert by_variant.player_of(name) is getattr(importlib.import_module(module), function)


def test_the_worker_plays_a_registered_variant_through_its_records_ai(third_variant):
    state = GameState()
    state.rules = {"variant": "muggins"}
    assert by_variant.choose_in_game("greedy", state, 0, [], random.Random(1), 0.1) is PASS


def test_the_creation_schema_takes_a_registered_variants_options_from_its_record(
        third_variant):
    rules = schemas.rules_schema(VARIANTS)()
    assert rules.load({"variant": "muggins", "bonus": 5}) == {
        "variant": "muggins", "target": 150, "bonus": 5}
    assert rules.load({"variant": "muggins", "target": 100})["target"] == 100  # shared
    with pytest.raises(ValidationError) as refused:
        rules.load({"variant": "muggins", "bonus": 21, "hands": 3})
    assert refused.value.messages == {"bonus": ["the bonus is 0 to 20 (M3)"],
                                      "hands": ["hands is no option of muggins (F16)"]}
    with pytest.raises(ValidationError) as refused:
        rules.load({"variant": "all_fives", "bonus": 1})
    assert refused.value.messages == {"bonus": ["bonus is no option of all_fives (F16)"]}


def test_the_registry_gives_the_creation_schema_its_options_and_seats():
    assert list(schemas.RulesIn().fields) == [
        "variant", "hands", "opening", "target", "turn_seconds", "timeouts_to_leave"]
    assert schemas.option_defaults(VARIANTS) == {"spinner": {"hands": 10, "opening": "draw"},
                                                 "all_fives": {"target": 150}}
    with pytest.raises(ValidationError) as refused:
        schemas.CreateGameIn().load({"players": [{"name": "A", "kind": "human"}] * 5,
                                     "rules": {"variant": "all_fives"}})
    assert refused.value.messages == {"players": ["an All Fives game has 2 to 4 players (F2)"]}
