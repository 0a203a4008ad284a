"""One place where every failure becomes an application/problem+json answer."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, json, request
from marshmallow.exceptions import SCHEMA
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from service.adapters.redis_store import NOT_NOW
from service.api import problems
from service.api.schemas import ProblemOut
from service.usecases import errors as refusals
from service.usecases.ports import StoreFull, StoreUnavailable

PROBLEM_JSON = "application/problem+json"
_problem_out = ProblemOut()
log = logging.getLogger("spinner.api")

ANSWERS: dict[type[refusals.Refusal], type[problems.Problem]] = {
    refusals.NoSuchGame: problems.NotFound,
    refusals.NoSuchVersion: problems.NotFound,
    refusals.TokenMissing: problems.Unauthorized,
    refusals.BadToken: problems.Unauthorized,
    refusals.OtherGamesToken: problems.Forbidden,
    refusals.BadTicket: problems.Unauthorized,
    refusals.VersionMismatch: problems.PreconditionFailed,
    refusals.RaceLost: problems.RaceLost,
    refusals.NotFinished: problems.Conflict,
    refusals.KeyReused: problems.IdempotencyMismatch,
    refusals.KeyPending: problems.Conflict,
    refusals.TooManyKeys: problems.TooManyRequests,
    refusals.InvalidRequest: problems.BadRequest,
    refusals.MalformedMove: problems.BadRequest,
    refusals.OutOfTurn: problems.Conflict,
    refusals.IllegalMove: problems.Unprocessable,
    refusals.TooManyAiGames: problems.TooManyAiGames,
    refusals.RefusedNotifyUrl: problems.BadRequest,
    refusals.SeatLeft: problems.SeatLeft,
}
"""The one place where each refusal of the use cases gets its status and problem type."""


def problem_response(problem: problems.Problem, headers: dict[str, str] | None = None) -> Response:
    """Return the problem+json answer for `problem`."""
    body = json.dumps(_problem_out.dump(problem.body()))
    return Response(body, problem.status, headers=headers, mimetype=PROBLEM_JSON)


def problem_for(refusal: refusals.Refusal) -> problems.Problem:
    """Return the problem that answers a use case's refusal, naming the facts it names."""
    return ANSWERS[type(refusal)](refusal.detail, **refusal.extra)


def field_errors(messages: Any, prefix: str = "") -> list[dict[str, str]]:
    """Flatten marshmallow's nested messages into `[{field, message}]` with dotted paths; a
    message about a whole field (marshmallow's `_schema` key under it) names that field."""
    if isinstance(messages, dict):
        return [e for key, sub in messages.items()
                for e in field_errors(sub, _path(prefix, key))]
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return [{"field": prefix or "body", "message": m} for m in messages]
    return [{"field": prefix or "body", "message": str(messages)}]


def _path(prefix: str, key: Any) -> str:
    if key == SCHEMA:
        return prefix
    return f"{prefix}.{key}" if prefix else str(key)


def register(app: Flask) -> None:
    """Install the error handlers on the app."""
    app.register_error_handler(problems.Problem, _on_problem)
    app.register_error_handler(refusals.Refusal, _on_refusal)
    app.register_error_handler(StoreUnavailable, _on_store_down)
    for not_now in NOT_NOW:  # a Redis error that no adapter turned into StoreUnavailable
        app.register_error_handler(not_now, _on_store_down)
    app.register_error_handler(StoreFull, _on_store_full)
    app.register_error_handler(HTTPException, _on_http)
    app.register_error_handler(Exception, _on_crash)


def _on_problem(problem: problems.Problem) -> Response:
    headers = {}
    if "retry_after" in problem.extra:
        headers["Retry-After"] = str(problem.extra.pop("retry_after"))
    if problem.status == 401:
        headers["WWW-Authenticate"] = problem.extra.pop("challenge", None) or _challenge()
    return problem_response(problem, headers)


def _on_refusal(refusal: refusals.Refusal) -> Response:
    return _on_problem(problem_for(refusal))


def _challenge() -> str:
    """The WWW-Authenticate of a 401 (RFC 9110 11.6.1, RFC 6750 3): a bearer token is asked
    for; a bearer token sent empty is an invalid request, and any other one an invalid token."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":  # none sent, or another scheme: no error is named
        return "Bearer"
    return f'Bearer error="{"invalid_token" if token.strip() else "invalid_request"}"'


def _on_store_down(error: Exception) -> Response:
    log.warning("store unavailable: %s: %s", type(error).__name__, error)
    return problem_response(problems.Unavailable("the game store cannot be reached; retry"),
                            {"Retry-After": "1"})


STORE_FULL = ("the game store is full (Redis is out of memory): it takes no new games or moves "
              "until room is made; reads still answer; retry later")
"""The 503's detail when the store refuses a write for want of memory."""


def _on_store_full(error: Exception) -> Response:
    log.error("store full: %s: %s", type(error).__name__, error)
    return problem_response(problems.Unavailable(STORE_FULL), {"Retry-After": "1"})


def _on_http(error: HTTPException) -> Response:
    if isinstance(error, RequestEntityTooLarge):
        return problem_response(problems.TooLarge("the body is over the size limit"))
    if error.code == 400:  # werkzeug's own: as every 400, it names what is wrong
        return problem_response(problems.BadRequest(
            "the request could not be read",
            errors=[{"field": "request", "message": "not a readable HTTP request"}]))
    problem = problems.Problem(error.description or error.name)
    problem.status, problem.title = error.code or 500, error.name
    problem.slug = error.name.lower().replace(" ", "-")
    return problem_response(problem, {"Allow": ", ".join(error.valid_methods)}
                            if getattr(error, "valid_methods", None) else None)


def _on_crash(error: Exception) -> Response:
    log.exception("unhandled error")
    return problem_response(problems.Problem("an unexpected error occurred"))
