"""`GET /healthz`: whether the service can serve: its store takes writes, its queue answers."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from service.api import problems
from service.api.answers import answer

bp = Blueprint("health", __name__)
DOWN = {"store": "the game store cannot take writes now",
        "full": "the game store is full (Redis is out of memory): it takes no writes",
        "queue": "the AI turn queue's Redis cannot be reached"}
"""The 503's detail for each part `Services.unavailable` names."""


@bp.get("/healthz")
def healthz() -> Response:
    """200 while the store takes writes and the queue's Redis answers, else 503 problem+json
    naming the part that is down (a load balancer then sends no traffic here)."""
    down = current_app.extensions["spinner"].unavailable()
    if down is not None:
        raise problems.Unavailable(DOWN[down], retry_after=1)
    return answer({"status": "ok", "store": "reachable"})
