"""Every way a request can fail, as data: status, title and detail (RFC 9457 problems)."""

from __future__ import annotations

from typing import Any


class Problem(Exception):
    """A failure the client is told about; `body()` is its problem+json document."""

    status = 500
    title = "Internal error"
    slug = "internal"

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra

    @classmethod
    def replayed(cls, body: dict[str, Any]) -> Problem:
        """Rebuild a problem from the document first sent (an idempotent replay)."""
        base = ("type", "title", "status", "detail")
        problem = cls(body["detail"], **{k: v for k, v in body.items() if k not in base})
        problem.status, problem.title = body["status"], body["title"]
        problem.slug = body["type"].rsplit("/", 1)[-1]
        return problem

    def body(self) -> dict[str, Any]:
        """Return the problem+json document."""
        return {"type": f"/problems/{self.slug}", "title": self.title, "status": self.status,
                "detail": self.detail, **self.extra}


def _problem(status: int, slug: str, title: str) -> type[Problem]:
    return type(slug.title().replace("-", ""), (Problem,),
                {"status": status, "slug": slug, "title": title, "__doc__": title + "."})


BadRequest = _problem(400, "invalid-request", "The request does not fit the schema")
Unauthorized = _problem(401, "unauthorized", "No valid seat token")
UnknownApiKey = _problem(401, "unknown-api-key", "No such API key")
Forbidden = _problem(403, "forbidden", "The token belongs to another game")
Restricted = _problem(403, "restricted", "This address or token may not read this")
NotFound = _problem(404, "not-found", "No such resource")
BodyTimeout = _problem(408, "request-timeout", "The request body did not arrive in time")
Conflict = _problem(409, "conflict", "The request conflicts with the game's state")
RaceLost = _problem(409, "race-lost", "Another move of this seat landed first")
SeatLeft = _problem(409, "seat-left", "The seat has left the match")
PreconditionFailed = _problem(412, "version-mismatch", "The game has moved on")
TooLarge = _problem(413, "too-large", "The request body is too large")
NotJson = _problem(415, "unsupported-media-type", "The body's Content-Type is not JSON")
Unprocessable = _problem(422, "illegal-move", "The rules forbid this move")
IdempotencyMismatch = _problem(422, "idempotency-key-reused",
                               "The Idempotency-Key was used with another body")
TooManyRequests = _problem(429, "rate-limited", "Too many requests")
TooManyAiGames = _problem(429, "too-many-ai-games", "Too many open games with AI seats")
TooManyStreams = _problem(429, "too-many-streams", "Too many open streams for this client")
UnknownCoding = _problem(501, "not-implemented", "The transfer coding is not supported")
Unavailable = _problem(503, "store-unavailable", "The game store cannot be reached")
StreamsFull = _problem(503, "streams-full", "The server holds as many streams as it may")

