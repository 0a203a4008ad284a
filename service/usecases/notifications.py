"""Turn notifications (webhooks, API.md "Lifecycle"): what an append tells a game's URL.

A game created with `notify` keeps its URL and secret in its meta. After each append that
landed (a creation, or any `recording.append`: a seat's move, an AI's move, a timeout, a
leave) there is a notification of each: `turn` when a human seat is to move, `hand_ended`
and `game_ended` (`of_append`). A creation or an append puts them in the notifier's outbox
in the same atomic step, where the store keeps it (`outgoing`); else `announce`
hands them to the notifier after it. Nothing here sends (no HTTP on a request's
path) or fails: the append lands whatever happens to its notifications."""

from __future__ import annotations

import base64
import logging
import secrets
from typing import Any, NamedTuple

from service.game import events as ev
from service.game.state import Match
from service.usecases.context import Context
from service.usecases.errors import RefusedNotifyUrl
from service.usecases.seat_views import view_of
from service.usecases.seats import meta

TURN, HAND_ENDED, GAME_ENDED = "turn", "hand_ended", "game_ended"
"""The notifications' `type`s."""
SECRET_PREFIX = "whsec_"
log = logging.getLogger("spinner.notifications")


def new_secret() -> str:
    """Return a fresh signing secret: `whsec_` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def subscribe(ctx: Context, notify: dict[str, Any]) -> dict[str, str]:
    """Return the meta fields of a game notified at `notify["url"]`, with a fresh secret;
    RefusedNotifyUrl for a URL the notifier refuses (naming `notify.url`)."""
    url = notify["url"]
    reason = ctx.notifier.refusal(url)
    if reason is not None:
        raise RefusedNotifyUrl(f"notify.url is refused: {reason}",
                               errors=[{"field": "notify.url", "message": reason}])
    return {"notify_url": url, "notify_secret": new_secret()}


def webhook_id(game_id: str, body: dict[str, Any]) -> str:
    """Return the notification's `webhook-id`, the same on every try: one per game, version
    and type, so a notification announced twice (an append retried) is queued once."""
    return f"msg_{game_id}_{body['version']}_{body['type']}"


def human_to_move(state: Match[Any]) -> bool:
    """Whether a human seat is the one to move (by its kind now: a seat that left is `ai`)."""
    turn = state.turn
    return (turn is not None and not state.awaiting_server
            and state.players[turn]["kind"] == "human")


def bodies(ctx: Context, game_id: str, state: Match[Any],
           events: list[ev.Event]) -> list[dict[str, Any]]:
    """Return the notifications of an append, in order of version: its hand and match ends,
    then the turn of the human seat to move after it. They name no tile (R25)."""
    found = []
    for event in events:
        data = event["data"]
        if event["type"] == ev.HAND_ENDED:
            found.append({"type": HAND_ENDED, "game_id": game_id, "version": event["seq"],
                          "hand_number": data["hand_number"], "points": list(data["points"])})
        elif event["type"] == ev.GAME_ENDED:
            found.append({"type": GAME_ENDED, "game_id": game_id, "version": event["seq"],
                          "totals": list(data["totals"]), "winners": list(data["winners"])})
    if human_to_move(state):
        shown = view_of(ctx, game_id, state, None).table.fields
        found.append({"type": TURN, "game_id": game_id, "version": state.version,
                      "seat": state.turn, "turn_deadline": shown.get("turn_deadline")})
    return found


class Outgoing(NamedTuple):
    """An append's notifications (webhook-id, body), and their outbox `entries` for the
    store's write to push in its own step (none where the store does not keep the outbox:
    then `announce` queues the notifications after the write)."""

    notices: list[tuple[str, dict[str, Any]]]
    entries: list[str]


def outgoing(ctx: Context, game_id: str, state: Match[Any], events: list[ev.Event],
             notified: bool | None = None) -> Outgoing:
    """Return the notifications of an append (`state` is after it) and their outbox entries,
    as `of_append` makes them."""
    notices = of_append(ctx, game_id, state, events, notified)
    return Outgoing(notices, ctx.notifier.entries(game_id, notices) if notices else [])


def of_append(ctx: Context, game_id: str, state: Match[Any], events: list[ev.Event],
              notified: bool | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Return the notifications (webhook-id, body) of an append (`state` is after it), if
    the game has a URL: `notified` says whether it has where the caller knows (a creation,
    whose meta is not stored yet), else its meta. It never fails: notifications it cannot
    make are logged, and none."""
    try:
        if notified is None:
            found = meta(ctx, game_id)
            notified = found is not None and bool(found.notify_url)
        if not notified:
            return []
        return [(webhook_id(game_id, body), body) for body in bodies(ctx, game_id, state, events)]
    except Exception as error:  # the append goes ahead whatever its notifications
        log.warning("the notifications of %s at %d were not made: %s: %s", game_id,
                    state.version, type(error).__name__, error)
        return []


def announce(ctx: Context, game_id: str, version: int, sent: Outgoing,
             marked: bool = False) -> None:
    """Queue the notifications of an append that landed at `version` that it did not put in
    the outbox itself (none if it pushed their `entries`), and the drain it `marked`
    queued. It never fails: a notification it cannot queue is logged and dropped."""
    try:
        if marked:
            ctx.notifier.queue_drain()
        for webhook, body in [] if sent.entries else sent.notices:
            ctx.notifier.send(game_id, webhook, body)
    except Exception as error:  # the append landed: its answer must say so
        log.warning("the notifications of %s at %d were not queued: %s: %s", game_id,
                    version, type(error).__name__, error)
