"""Creating a game: deal hand 1, keep the seats' token hashes, hand each human its token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.game import events as ev
from service.game.state import Match
from service.game.variants import variant_of
from service.usecases import notifications
from service.usecases.ai_turns import instant, now, queue_due
from service.usecases.clients import Client
from service.usecases.context import Context
from service.usecases.errors import TooManyAiGames
from service.usecases.tokens import new_append_id, new_game_id, new_token, token_hash

RETRY_AI_GAMES_S = 60
"""The Retry-After of a creation past the cap of open AI games: a minute in which some may end."""


@dataclass
class Created:
    """A new game, its first state, every human seat's token and, for a game notified at a
    URL, `notify` with its signing secret (all shown once)."""

    game_id: str
    state: Match[Any]
    tokens: dict[int, str]
    notify: dict[str, str] | None = None


def create(ctx: Context, players: list[dict[str, Any]], rules: dict[str, Any],
           seed: int | None, client: Client | None = None,
           notify: dict[str, Any] | None = None) -> Created:
    """Create a game of the variant `rules` name, deal hand 1 and return each human seat's
    token. `seed` is kept only where the dealer honours seeds; else it is ignored and every
    deck is random. A game with AI seats, or a turn clock (whose timeouts the random AI
    plays, and which may hand seats to it), counts against its client's cap of open AI games
    (TooManyAiGames past it), and its AI turns against the client's cap of queued turns.
    With `notify` (its `url`), the game's notifications go there, signed with a secret
    made now (RefusedNotifyUrl for a URL that may not have them)."""
    subscribed = {} if notify is None else notifications.subscribe(ctx, notify)
    game_id, seed = new_game_id(), ctx.dealer.kept_seed(seed)
    variant = variant_of(rules)
    shuffle = ctx.dealer.shuffle(game_id, seed, variant.tiles)
    state, events = variant.create_game(players, rules, shuffle, ctx.clock())
    tokens = {s: new_token(game_id) for s, p in enumerate(players) if p["kind"] == "human"}
    meta = {f"token:{s}": token_hash(t) for s, t in tokens.items()}
    meta["seed"] = "" if seed is None else str(seed)
    meta["variant"] = variant.name
    meta.update(subscribed)
    if client is not None:
        meta.update(client=client.id, client_keyed="1" if client.keyed else "")
        if any(p["kind"] == "ai" for p in players) or rules.get("turn_seconds"):
            admit_game(ctx, client, game_id)  # a clock's timeouts are the random AI's moves
    sent = notifications.outgoing(ctx, game_id, state, events, notified=bool(subscribed))
    marked = ctx.store.create(game_id, events, meta, append_id=new_append_id(),
                              outbox=sent.entries)
    queue_due(ctx, game_id, state)
    notifications.announce(ctx, game_id, state.version, sent, marked)
    shown = {"url": subscribed["notify_url"], "secret": subscribed["notify_secret"]} \
        if subscribed else None
    return Created(game_id, state, tokens, shown)


def admit_game(ctx: Context, client: Client, game_id: str) -> None:
    """Count a new game among the client's open AI games; at the cap, first stop counting
    those that ended, are gone or idle, then raise TooManyAiGames if none did."""
    cap = ctx.caps.limits(client).games
    ledger = ctx.caps.ledger
    if ledger.admit_game(client, game_id, cap):
        return
    for counted in ledger.open_games(client):
        if not still_open(ctx, counted):
            ledger.release_game(client, counted)
    if not ledger.admit_game(client, game_id, cap):
        more = "" if client.keyed else (
            f"; an API key (X-Api-Key) allows {ctx.caps.keyed.games}")
        raise TooManyAiGames(f"this client has {cap} open games with AI seats or turn clocks, "
                             f"as many as it may: end one first{more}",
                             retry_after=RETRY_AI_GAMES_S)


def still_open(ctx: Context, game_id: str) -> bool:
    """Whether a game counted as open still is: it exists, has not ended and had an event
    within the caps' idle time."""
    version = ctx.store.version(game_id)
    if not version:
        return False
    last = ctx.store.read(game_id, after=version - 1)[-1]
    return last["type"] != ev.GAME_ENDED and now(ctx) - instant(last["at"]) < ctx.caps.idle_s
