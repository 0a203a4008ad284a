"""The Flask app factory: blueprints, error handlers and the services they use."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, request

from service.adapters import logs
from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.api import (
    compression,
    cors,
    errors,
    games,
    health,
    limits,
    observability,
    pages,
    problems,
    stream,
)
from service.api.open_streams import OpenStreams


def create_app(config: dict[str, Any] | None = None, services: Services | None = None) -> Flask:
    """Build the app; `services` defaults to `bootstrap.build(Settings.from_env())`."""
    logs.configure()
    app = Flask("spinner", static_folder=None)
    app.response_class = EmptyUntyped
    app.config.update(config or {})
    services = services or build(Settings.from_env())
    app.config["MAX_CONTENT_LENGTH"] = services.settings.max_body_bytes
    app.extensions["spinner"] = services
    app.extensions[stream.OPEN_STREAMS] = OpenStreams(services.settings.max_streams,
                                                      services.settings.streams_per_client)
    app.url_map.merge_slashes = False  # `/v1//games` is no path of the API: 404, not a redirect
    app.before_request(_no_leading_double_slash)
    for blueprint in (games.bp, stream.bp, health.bp, observability.bp, pages.bp):
        app.register_blueprint(blueprint)
    observability.register(app)  # around the whole app: every answer has an id and a log line
    limits.register(app, services.settings)
    cors.register(app, services.settings.cors_origins)
    compression.register(app, services.settings.gzip_min_bytes)
    errors.register(app)
    return app


class EmptyUntyped(Response):
    """Flask's answer, naming no Content-Type unless given one: an answer with no body (to
    OPTIONS, a CORS preflight's 204) is no HTML page. Every other answer names its own."""

    default_mimetype = None


def _no_leading_double_slash() -> None:
    """404 for `//v1/...`: no path of the API, which routing would read as `/v1/...`."""
    if request.environ.get("PATH_INFO", "").startswith("//"):
        raise problems.NotFound("there is no such path")
