"""Whose seat a request speaks for: a game's meta (seat token hashes, seed) and its tokens."""

from __future__ import annotations

from dataclasses import dataclass

from service.game.variants import variant_of
from service.usecases.clients import Client
from service.usecases.context import Context
from service.usecases.errors import BadToken, OtherGamesToken, TokenMissing
from service.usecases.loading import is_game_id, keep, load, no_such_game
from service.usecases.tokens import token_game, token_hash


@dataclass(frozen=True)
class Meta:
    """What never changes of a game: its seats by token hash, its seed ('' if none), the
    client that created it (None: a game from before clients were kept), the URL its
    notifications go to ('' if none; its secret is read only where they are signed) and the
    name of its variant ('' for a game from before it was kept here: its log names it)."""

    seats: dict[str, int]
    seed: str
    client: Client | None = None
    notify_url: str = ""
    variant: str = ""

    @classmethod
    def parse(cls, stored: dict[str, str]) -> Meta:
        """Read the stored meta fields (`token:<seat>`, `seed`, `client`, `client_keyed`,
        `notify_url`, `variant`)."""
        seats = {v: int(k.split(":")[1]) for k, v in stored.items() if k.startswith("token:")}
        client = stored.get("client")
        return cls(seats, stored.get("seed", ""),
                   None if client is None else Client(client, stored.get("client_keyed") == "1"),
                   stored.get("notify_url", ""), stored.get("variant", ""))


def meta(ctx: Context, game_id: str) -> Meta | None:
    """Return the game's meta, None if there is no such game."""
    if not is_game_id(game_id):
        return None
    found = ctx.metas.get(game_id)
    if found is None:
        stored = ctx.store.meta(game_id)
        if not stored:
            return None
        found = Meta.parse(stored)
        ctx.metas.put(game_id, found)
    return found


def require_game(ctx: Context, game_id: str) -> Meta:
    """Return the game's meta; NoSuchGame if there is none."""
    found = meta(ctx, game_id)
    if found is None:
        raise no_such_game()
    return found


def variant_name(ctx: Context, game_id: str) -> str:
    """Return the name of the variant the game plays; NoSuchGame if there is none."""
    named = require_game(ctx, game_id).variant
    if named:
        return named
    state = load(ctx, game_id)  # a game created before its meta named its variant
    keep(ctx, game_id, state)
    return variant_of(state.rules).name


def seat_for(ctx: Context, game_id: str, token: str | None, required: bool) -> int | None:
    """Return the token's seat (None: a spectator, if allowed). Tokens are found by their
    SHA-256, which says nothing of the token it was made from."""
    seats = require_game(ctx, game_id).seats
    if token is None:
        if required:
            raise TokenMissing("send Authorization: Bearer <seat token>")
        return None
    digest = token_hash(token)
    seat = seats.get(digest)
    if seat is not None:
        return seat
    other = meta(ctx, token_game(token))
    if other is not None and digest in other.seats:
        raise OtherGamesToken("this token is a seat token of another game")
    raise BadToken("the token is not a seat token of this game")
