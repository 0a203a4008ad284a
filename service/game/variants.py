"""The rule sets a game may play, one entry each: the registry the service reads.

A variant is one folder (All Fives: `service/game/allfives/`, rules, game and its
`variant.VARIANT`) and its entry in REGISTERED, the module that holds its `VARIANT`;
Spinner, the default, is `service.game.spinner`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from service.game import events as ev
from service.game import spinner, state
from service.game.variant import Variant

REGISTERED: Final = ("service.game.spinner", "service.game.allfives.variant")
"""The module of each variant (RULES.md, ALLFIVES.md), the one line a new variant adds to."""


def _registered(module: str) -> Variant:
    """Return the `VARIANT` a registered module holds."""
    found: Variant = importlib.import_module(module).VARIANT
    return found


VARIANTS: Final[Mapping[str, Variant]] = {v.name: v for v in map(_registered, REGISTERED)}
DEFAULT: Final = spinner.VARIANT.name


def variant_of(rules: Mapping[str, Any]) -> Variant:
    """Return the variant a game's `rules` name (Spinner when they name none)."""
    return VARIANTS[rules.get("variant", DEFAULT)]


def replay_log(events: Sequence[ev.Event], match: state.Match[Any] | None = None
               ) -> state.Match[Any]:
    """Fold `events` into `match`, or into a fresh match of the variant the log's first
    event (its `game_created`) names: the same events, the same state (R26)."""
    rules = match.rules if match is not None else events[0]["data"]["rules"]
    folded: state.Match[Any] = variant_of(rules).replay(events, match)
    return folded


def restore(data: dict[str, Any]) -> state.Match[Any]:
    """Rebuild a state of either variant from its `to_dict` output (a snapshot)."""
    restored: state.Match[Any] = variant_of(data["rules"]).from_dict(data)
    return restored
