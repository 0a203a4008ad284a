"""Request ids, the access log and per-request metrics; `GET /metrics` for Prometheus."""

from __future__ import annotations

import logging
import re
import secrets
import time
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, request

from service import logs, metrics

bp = Blueprint("observability", __name__)
access = logging.getLogger("spinner.access")
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
"""Methods counted by name; any other is counted as `other`, so labels stay few."""
_Children = tuple[Any, Any, Any]
_children: dict[tuple[str, str, int], _Children] = {}  # by method, route and status


@bp.get("/metrics")
def metrics_text() -> Response:
    """Every metric in Prometheus' text format (OpenMetrics if the Accept header asks)."""
    queue = current_app.extensions["spinner"].queue.queue
    body, content_type = metrics.exposition(queue, request.headers.get("Accept", ""))
    return Response(body, headers={"Content-Type": content_type})


def register(app: Flask) -> None:
    """Give every request an id, and log and count every answer."""
    app.before_request(_start)
    app.after_request(_finish)
    app.teardown_request(lambda _error: logs.request_id.set(None))


def _start() -> None:
    sent = request.headers.get("X-Request-ID", "")
    g.request_id = sent if SANE_REQUEST_ID.fullmatch(sent) else secrets.token_hex(16)
    g.started = time.perf_counter()
    logs.request_id.set(g.request_id)


def _finish(response: Response) -> Response:
    seconds = time.perf_counter() - g.started
    req = request._get_current_object()  # type: ignore[attr-defined]  # one proxy lookup
    method, status = req.method, response.status_code
    route = req.url_rule.rule if req.url_rule else "unmatched"
    response.headers["X-Request-ID"] = g.request_id
    requests, durations, moves = _metrics(method, route, status, req.endpoint)
    requests.inc()
    durations.observe(seconds)
    if moves is not None:
        moves.inc()
    access.info("%s %s %s", method, route, status,
                extra={"method": method, "route": route, "status": status,
                       "duration_ms": round(seconds * 1000, 2)})
    return response


def _metrics(method: str, route: str, status: int, endpoint: str | None) -> _Children:
    """Return the labelled request counter, duration histogram and move counter (or None)."""
    counted = method if method in METHODS else "other"
    found = _children.get((counted, route, status))
    if found is None:
        moves = metrics.MOVES.labels("accepted" if status == 200 else f"rejected_{status}") \
            if endpoint == "games.post_move" else None
        found = (metrics.HTTP_REQUESTS.labels(counted, route, status),
                 metrics.HTTP_SECONDS.labels(route), moves)
        _children[(counted, route, status)] = found
    return found
