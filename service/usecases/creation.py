"""Creating a game: deal hand 1, keep the seats' token hashes, hand each human its token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.game.commands import create_game
from service.game.state import GameState
from service.usecases.ai_turns import queue_due
from service.usecases.context import Context
from service.usecases.tokens import new_append_id, new_game_id, new_token, token_hash


@dataclass
class Created:
    """A new game, its first state and every human seat's token (shown once)."""

    game_id: str
    state: GameState
    tokens: dict[int, str]


def create(ctx: Context, players: list[dict[str, Any]], rules: dict[str, Any],
           seed: int | None) -> Created:
    """Create a game, deal hand 1 and return each human seat's token. `seed` is kept only
    where the dealer honours seeds; else it is ignored and every deck is random."""
    game_id, seed = new_game_id(), ctx.dealer.kept_seed(seed)
    state, events = create_game(players, rules, ctx.dealer.shuffle(game_id, seed), ctx.clock())
    tokens = {s: new_token(game_id) for s, p in enumerate(players) if p["kind"] == "human"}
    meta = {f"token:{s}": token_hash(t) for s, t in tokens.items()}
    meta["seed"] = "" if seed is None else str(seed)
    ctx.store.create(game_id, events, meta, append_id=new_append_id())
    queue_due(ctx, game_id, state)
    return Created(game_id, state, tokens)
