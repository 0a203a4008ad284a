"""The browser page and the replay viewer (issue 20): static HTML, CSS and JavaScript modules
from `service/api/web/`, clients of the public /v1 API like any other, under a strict
Content-Security-Policy. None of this is part of the API (openapi.yaml)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

WEB = Path(__file__).parent / "web"
bp = Blueprint("web", __name__, static_folder=WEB, static_url_path="/web")

SECURITY = {
    "Content-Security-Policy": "default-src 'self'; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'; object-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""On every answer of this blueprint: no inline script or style runs, nothing is loaded
from elsewhere, and the page is framed by no one."""


@bp.get("/")
def game_page() -> Response:
    """The game against the AI: a new game's form, then its table (`?game=<id>`)."""
    return _page("index.html")


@bp.get("/replay/<game_id>")
def replay_page(game_id: str) -> Response:
    """The replay viewer of a finished game (the page reads the id from its own URL)."""
    return _page("replay.html")


@bp.get("/rules")
@bp.get("/rules/all-fives")
def rules_page() -> Response:
    """The full rules (docs/RULES.md, shipped as web/rules.md; All Fives': docs/ALLFIVES.md,
    as web/allfives.md), rendered by the page."""
    return _page("rules.html")


@bp.after_request
def _secure(response: Response) -> Response:
    response.headers.update(SECURITY)
    return response


def _page(name: str) -> Response:
    response = send_from_directory(WEB, name, mimetype="text/html")
    response.headers["Cache-Control"] = "no-cache"
    return response
