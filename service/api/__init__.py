"""The Flask app factory: blueprints, error handlers and the services they use."""

from __future__ import annotations

from typing import Any

from flask import Flask

from service import logs
from service.api import cors, errors, games, health, limits, observability, stream
from service.bootstrap import Services, build
from service.config import Settings


def create_app(config: dict[str, Any] | None = None, services: Services | None = None) -> Flask:
    """Build the app; `services` defaults to `bootstrap.build(Settings.from_env())`."""
    logs.configure()
    app = Flask("spinner", static_folder=None)
    app.config.from_prefixed_env("SPINNER")
    app.config.update(config or {})
    services = services or build(Settings.from_env())
    app.config["MAX_CONTENT_LENGTH"] = services.settings.max_body_bytes
    app.extensions["spinner"] = services
    for blueprint in (games.bp, stream.bp, health.bp, observability.bp):
        app.register_blueprint(blueprint)
    observability.register(app)  # around the whole app: every answer has an id and a log line
    limits.register(app, services.settings)
    cors.register(app, services.settings.cors_origins)
    errors.register(app)
    return app
