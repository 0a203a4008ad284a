"""schemathesis hooks for an outside run (`schemathesis.toml` loads them from the project root).

1. A seat token that this service issued is the run's real credential, not a generated one.
   schemathesis 4.32 counts any `Authorization` that it did not get from `-H` or `[auth]` as
   generated, so a seat token handed on by a link (creation -> state -> move) made its check
   `ignored_auth` call a correct 200 "accepts invalid authentication". These hooks remember
   the tokens each creation answers with and declare a request that carries one as
   authenticated: `ignored_auth` then checks, as it does for configured credentials, that the
   same request without the token and with a wrong one is refused (401/403); and the random
   `X-Api-Key` it would add beside a real token (401, as documented) is left out.
2. A game the run creates seats a human first: the links that hand seat 0's token on then have
   one to hand on (the other seats stay as generated, AI or human)."""

from __future__ import annotations

from typing import Any

import schemathesis

CREATE_GAME = "POST /v1/games"
ISSUED: set[str] = set()  # `Bearer <token>` of every seat token that a creation answered


@schemathesis.hook
def after_call(context: Any, case: Any, response: Any) -> None:
    """Remember the seat tokens of a game the run created (201)."""
    if case.operation.label != CREATE_GAME or response.status_code != 201:
        return
    for seat in response.json().get("seats", []):
        if "token" in seat:
            ISSUED.add(f"Bearer {seat['token']}")


@schemathesis.hook
def filter_body(context: Any, body: Any) -> bool:
    """Keep the creations whose seat 0 is a human's (and any body that is no creation)."""
    if context.operation is None or context.operation.label != CREATE_GAME:
        return True
    players = body.get("players") if isinstance(body, dict) else None
    if not isinstance(players, list) or not players or not isinstance(players[0], dict):
        return True  # no valid creation: it is there to be refused (400)
    return bool(players[0].get("kind") == "human")


@schemathesis.auth(refresh_interval=None)
class IssuedSeatToken:
    """The `Authorization` a request already carries, when it is an issued seat token."""

    def get(self, case: Any, context: Any) -> str | None:
        """The request's own seat token if the service issued it; else none (generated)."""
        value = case.headers.get("Authorization")
        return value if value in ISSUED else None

    def set(self, case: Any, data: str, context: Any) -> None:
        """Keep the token where it is: it is already the request's `Authorization`."""
        case.headers["Authorization"] = data
