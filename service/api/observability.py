"""Request ids, the access log and per-request metrics; `GET /metrics` for Prometheus."""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import re
import secrets
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Flask, Response, current_app, request

from service.adapters import logs, metrics
from service.adapters.settings import Settings
from service.api import problems
from service.api.requests import bearer_token

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

bp = Blueprint("observability", __name__)
access = logging.getLogger("spinner.access")
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
"""Methods counted by name; any other is counted as `other`, so labels stay few."""
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
_Children = tuple[Any, Any, Any]
_children: dict[tuple[str, str, int], _Children] = {}  # by method, route and status


@bp.get("/metrics")
def metrics_text() -> Response:
    """Every metric in Prometheus' text format (OpenMetrics if the Accept header asks); 403
    for a caller the settings do not let in (`metrics_allowed`, `metrics_token`)."""
    services = current_app.extensions["spinner"]
    if not may_read_metrics(services.settings):
        raise problems.Restricted("the metrics are restricted to some addresses or a token")
    queues = services.queue.lanes.values()
    body, content_type = metrics.exposition(queues, request.headers.get("Accept", ""))
    return Response(body, headers={"Content-Type": content_type})


def may_read_metrics(settings: Settings) -> bool:
    """Whether this request may read /metrics: always if neither setting restricts it, else
    if it comes from an allowed address or network or sends the metrics token."""
    allowed, token = settings.metrics_allowed.strip(), settings.metrics_token
    if not (allowed or token):
        return True
    if token and hmac.compare_digest(_sent_token().encode(), token.encode()):
        return True
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:  # no address (a Unix socket)
        return False
    return any(address in network for network in _networks(allowed))


def _sent_token() -> str:
    """Return the bearer token sent, or "" for none or a malformed Authorization header."""
    try:
        return bearer_token() or ""
    except problems.Unauthorized:
        return ""


@functools.cache
def _networks(allowed: str) -> tuple[IPNetwork, ...]:
    """The comma-separated addresses and networks of `allowed` (an address: a network of one)."""
    return tuple(ipaddress.ip_network(net.strip(), strict=False)
                 for net in allowed.split(",") if net.strip())


def register(app: Flask) -> None:
    """Give every request an id, and log and count every answer (around the whole app)."""
    app.wsgi_app = Observed(app.wsgi_app)  # type: ignore[method-assign]


class Observed:
    """WSGI middleware: an id for each request (the client's X-Request-ID if sane), on every
    log line it causes and on its answer; one access line and the metrics for each answer."""

    def __init__(self, wsgi_app: WSGIApplication) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        """Serve one request through the app, observed."""
        started = time.perf_counter()
        sent = environ.get("HTTP_X_REQUEST_ID", "")
        request_id = sent if SANE_REQUEST_ID.fullmatch(sent) else secrets.token_hex(16)
        logs.request_id.set(request_id)

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers.append(("X-Request-ID", request_id))
            _answered(environ, int(status[:3]), time.perf_counter() - started)
            return start_response(status, headers, exc_info)

        try:
            return self.wsgi_app(environ, start)
        finally:
            logs.request_id.set(None)


def _answered(environ: WSGIEnvironment, status: int, seconds: float) -> None:
    """Count and log one answer; Flask's request (still in `environ`) names its route."""
    method = environ.get("REQUEST_METHOD", "")
    rule = getattr(environ.get("werkzeug.request"), "url_rule", None)
    route = rule.rule if rule else "unmatched"
    requests, durations, moves = _metrics(method, route, status, rule and rule.endpoint)
    requests.inc()
    durations.observe(seconds)
    if moves is not None:
        moves.inc()
    access.info("%s %s %s", method, route, status,
                extra={"method": method, "route": route, "status": status,
                       "duration_ms": round(seconds * 1000, 2)})


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
