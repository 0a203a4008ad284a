"""`GET /healthz`: whether the service can reach its store."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from service.api import problems
from service.api.answers import answer

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """200 when the store answers a ping, else 503 problem+json."""
    if not current_app.extensions["spinner"].store.ping():
        raise problems.Unavailable("the game store cannot be reached", retry_after=1)
    return answer({"status": "ok", "store": "reachable"})
