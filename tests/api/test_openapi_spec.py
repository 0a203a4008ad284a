"""openapi.yaml: a valid OpenAPI 3.1 document, in step with the app's routes and marshmallow
schemas, and a response checker (tests/api/contract.py) that catches what breaks it.

Nothing here needs Redis: the routes are read from an app built with stand-in services that
no request ever reaches, and the checker is fed hand-made Flask responses."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from flask import Flask, Response
from marshmallow import Schema
from openapi_spec_validator import validate

from service.adapters.settings import Settings
from service.api import problems, schemas
from service.api.answers import BY_CALLER
from service.api.app import EmptyUntyped, create_app
from service.entrypoints.gunicorn_worker import problem_answer
from tests.api.contract import (
    SPEC_PATH,
    ContractClient,
    ContractViolation,
    assert_fits_schema,
    assert_fits_stream,
    check_response,
    spec_dict,
)

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
IMPLICIT = {"HEAD", "OPTIONS"}  # Flask answers these for every route on its own
NOT_API = {"static"}  # Flask's static route: not part of the API (see the report)
PAGES = "web."  # the browser page's blueprint (service/api/pages.py): a client, not the API
REQUEST_ID = {"X-Request-ID": "test-1"}
ROOT = SPEC_PATH.parent


# The document ------------------------------------------------------------

def test_the_spec_is_valid_openapi_3_1() -> None:
    spec = spec_dict()
    validate(spec)
    assert spec["openapi"] == "3.1.0"
    assert spec["servers"] == [{"url": "/"}]
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        **spec["components"]["securitySchemes"]["bearerAuth"], "type": "http", "scheme": "bearer"}


def test_a_broken_spec_is_refused_by_the_validator() -> None:
    """The validator does find errors: one bad $ref is enough."""
    broken = json.loads(json.dumps(spec_dict()))
    broken["paths"]["/healthz"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"] = {"$ref": "#/components/schemas/NoSuchSchema"}
    with pytest.raises(Exception, match="NoSuchSchema"):
        validate(broken)


def flask_routes(app: Flask) -> set[tuple[str, str]]:
    """Return every (METHOD, /path/{param}) the app routes, but HEAD, OPTIONS, static and
    the browser page's."""
    return {(method, re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule))
            for rule in app.url_map.iter_rules()
            if rule.endpoint not in NOT_API and not rule.endpoint.startswith(PAGES)
            for method in (rule.methods or set()) - IMPLICIT}


def spec_routes() -> set[tuple[str, str]]:
    """Return every (METHOD, path) that openapi.yaml describes."""
    return {(method.upper(), path) for path, item in spec_dict()["paths"].items()
            for method in item if method in HTTP_METHODS}


@pytest.fixture(scope="module")
def routed_app() -> Flask:
    """The real app factory with stand-in services: only its url_map is read."""
    services = SimpleNamespace(settings=Settings(cors_origins="https://example.test"),
                               store=None, queue=None, games=None)
    return create_app({"TESTING": True}, services=services)  # type: ignore[arg-type]


def test_every_route_is_in_the_spec_and_every_spec_path_is_routed(routed_app: Flask) -> None:
    routes, documented = flask_routes(routed_app), spec_routes()
    assert routes - documented == set(), "routes the spec does not describe"
    assert documented - routes == set(), "paths in the spec that the app does not route"
    assert ("POST", "/v1/games/{game_id}/moves") in routes  # the comparison sees real routes


def test_path_parameters_are_declared_for_every_templated_path() -> None:
    for path, item in spec_dict()["paths"].items():
        declared = {_resolve(p)["name"] for p in item.get("parameters", [])
                    if _resolve(p)["in"] == "path"}
        assert declared == set(re.findall(r"\{(\w+)\}", path)), path


def test_every_error_answer_is_problem_json_and_every_answer_has_a_request_id() -> None:
    for path, item in spec_dict()["paths"].items():
        for method, operation in item.items():
            if method not in HTTP_METHODS:
                continue
            assert "500" in operation["responses"], (method, path)
            for status, response in operation["responses"].items():
                response = _resolve(response)
                assert "X-Request-ID" in response.get("headers", {}), (method, path, status)
                if int(status) >= 400:
                    assert list(response["content"]) == ["application/problem+json"], \
                        (method, path, status)


def test_every_problem_type_in_the_spec_is_one_the_service_raises() -> None:
    """Each `*Problem` schema's type and status are a service.api.problems class's (or, for 405,
    werkzeug's as errors.py renders it), so a renamed slug breaks this test."""
    raised = {(f"/problems/{cls.slug}", cls.status) for cls in vars(problems).values()
              if isinstance(cls, type) and issubclass(cls, problems.Problem)}
    raised |= {("/problems/method-not-allowed", 405)}
    raised |= {(body["type"], body["status"]) for body in map(gunicorn_problem, (414, 431))}
    documented = {(s["properties"]["type"]["const"], s["properties"]["status"]["const"])
                  for name, s in spec_dict()["components"]["schemas"].items()
                  if name.endswith("Problem") and name != "Problem"}
    assert len(documented) == 25  # 415 unsupported-media-type, 403 restricted (/metrics),
    # 408 request-timeout, 401 unknown-api-key, 429 too-many-ai-games, 405, gunicorn's
    # 414 and 431, 409 seat-left, 429 too-many-streams and 503 streams-full
    assert documented <= raised


def gunicorn_problem(status: int) -> dict[str, Any]:
    """The problem document of the HTTP server's own refusal with `status`."""
    return json.loads(problem_answer(status).partition(b"\r\n\r\n")[2])


ANY_REQUEST = {"400", "405", "414", "431", "500", "501"}
"""What any request may get, whatever its path and method: a request the HTTP server cannot
read (400, 414, 431, or 501 for a transfer coding it does not know), a method the path does
not support (405), an unexpected failure (500)."""


def test_every_operation_lists_what_any_request_may_get() -> None:
    for path, item in spec_dict()["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                assert set(operation["responses"]) >= ANY_REQUEST, (method, path)
                assert "Allow" in _resolve(operation["responses"]["405"])["headers"]


# The spec mirrors the marshmallow schemas ---------------------------------

MIRRORS = {
    schemas.CreateGameIn: "CreateGameRequest", schemas.PlayerIn: "PlayerRequest",
    schemas.RulesIn: "GameRulesRequest", schemas.MoveIn: "MoveRequest",
    schemas.CreatedOut: "Created", schemas.SeatOut: "CreatedSeat", schemas.StateOut: "State",
    schemas.RulesOut: "Rules", schemas.PlayerOut: "Player", schemas.LayoutOut: "Layout",
    schemas.PlacedTileOut: "PlacedTile", schemas.EndOut: "End",
    schemas.HandScoreOut: "HandScore", schemas.MoveOut: "Move", schemas.EventOut: "Event",
    schemas.EventsOut: "EventLog", schemas.ExportOut: "Export", schemas.ProblemOut: "Problem",
    schemas.FieldErrorOut: "FieldError", schemas.HealthOut: "Health",
    schemas.StreamTurnOut: "StreamTurn", schemas.StreamTicketOut: "StreamTicket",
    schemas.NotifyIn: "NotifyRequest", schemas.NotifyOut: "CreatedNotify",
    schemas.LeaveIn: "LeaveRequest",
}


def test_every_marshmallow_schema_has_its_mirror_in_the_spec() -> None:
    defined = {cls for cls in vars(schemas).values()
               if isinstance(cls, type) and issubclass(cls, Schema)
               and cls is not Schema}
    assert defined == set(MIRRORS)


@pytest.mark.parametrize(("marshmallow", "name"), MIRRORS.items(),
                         ids=[n for n in MIRRORS.values()])
def test_the_spec_schema_has_the_same_fields(marshmallow: type[Schema], name: str) -> None:
    component = spec_dict()["components"]["schemas"][name]
    fields = marshmallow().fields
    shapes = object_shapes(component)  # one, or one per `oneOf` branch (State, Event, ...)
    assert set().union(*(names for names, _ in shapes)) == set(fields)
    for names, closed in shapes:
        assert names <= set(fields)
        assert closed  # marshmallow refuses/drops others
    if name.endswith("Request"):  # a request schema: the same fields are required
        assert set(component.get("required", [])) == {k for k, f in fields.items() if f.required}


# The checker: check_response on hand-made answers ------------------------

def answer(body: Any, status: int, mimetype: str = "application/json",
           headers: dict[str, str] | None = None) -> Response:
    """A hand-made answer, with the request id every answer carries and the `Vary` of the
    answers that depend on the caller (harmless on the others)."""
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return Response(data, status, headers={**REQUEST_ID, **BY_CALLER, **(headers or {})},
                    mimetype=mimetype)


def problem(status: int, slug: str, **extra: Any) -> Response:
    body = {"type": f"/problems/{slug}", "title": "t", "status": status, "detail": "d", **extra}
    return answer(body, status, "application/problem+json")


PLAYERS = [{"seat": 0, "name": "Ann", "kind": "human", "tile_count": 14, "total": 0},
           {"seat": 1, "name": "Bot", "kind": "ai", "level": "expert", "tile_count": 14,
            "total": 0}]
STATE = {"game_id": "abc", "version": 2, "status": "playing",
         "rules": {"variant": "spinner", "hands": 10, "opening": "draw"}, "hand_number": 1,
         "opening_double": "9-9",
         "turn": 0, "boneyard_count": 38, "layout": {"tiles": [], "ends": []},
         "obligations": [], "players": PLAYERS, "scores": [], "winners": [],
         "turn_deadline": None, "seat": 0,
         "hand": ["9-9", "0-S"], "legal_moves": [{"action": "play", "tile": "9-9", "end": None,
                                                  "expose": 9}]}
HAND_STARTED = {"seq": 2, "type": "hand_started", "at": "2024-05-01T12:00:00.000Z",
                "seat": None, "data": {"hand_number": 1, "opening_double": "9-9",
                                       "shuffler": 0, "hands": [["9-9"], None],
                                       "commitment": "c" * 64}}
DEALT = {**HAND_STARTED["data"], "deck": ["0-0"] * 66, "hands": [["9-9"], ["0-0"]],
         "salt": "5" * 64}
"""An unredacted hand_started's data (its deck is no real deck: the schema checks shapes)."""


def test_a_valid_problem_passes() -> None:
    check_response("GET", "/v1/games/{game_id}", problem(404, "not-found"))
    check_response("GET", "/v1/games/abc/events?after=x",
                   problem(400, "invalid-request", errors=[{"field": "after", "message": "m"}]))
    check_response("POST", "/v1/games/abc/moves",
                   problem(422, "illegal-move", rule="R16", legal_moves=[{"action": "draw"}]))


@pytest.mark.parametrize(("method", "path", "response", "why"), [
    ("GET", "/v1/games/abc", answer({"type": "/problems/not-found", "title": "t",
                                     "status": "404", "detail": "d"}, 404,
                                    "application/problem+json"), "status as a string"),
    ("GET", "/v1/games/abc", answer({"type": "/problems/not-found", "title": "t",
                                     "status": 404}, 404, "application/problem+json"),
     "no detail"),
    ("GET", "/v1/games/abc", answer({"type": "/problems/not-found", "title": "t",
                                     "status": 404, "detail": "d"}, 404),
     "application/json, not problem+json"),
    ("GET", "/v1/games/abc", problem(404, "not-found", stack="Traceback ..."),
     "a field the spec does not have"),
    ("GET", "/v1/games/abc", problem(409, "conflict"), "409 is not an answer of GET"),
    ("GET", "/v1/games/abc", problem(404, "forbidden"), "the wrong type for a 404"),
    ("GET", "/v1/games/abc/events", problem(400, "invalid-request"), "a 400 without errors"),
    ("POST", "/v1/games/abc/moves", problem(412, "version-mismatch"), "a 412 without version"),
    ("POST", "/v1/games/abc/moves", problem(422, "illegal-move", rule="R16"),
     "a 422 without legal_moves"),
    ("POST", "/v1/games", problem(429, "rate-limited"), "a 429 without Retry-After"),
    ("POST", "/v1/games", problem(503, "store-unavailable"), "a 503 without Retry-After"),
    ("GET", "/v1/games/abc", Response(json.dumps(STATE), 200, headers={
        **REQUEST_ID, **BY_CALLER}, mimetype="application/json"), "a state without ETag"),
    ("GET", "/v1/games/abc", Response(json.dumps(STATE), 200, headers={
        **REQUEST_ID, "ETag": '"2"'}, mimetype="application/json"), "a state without Vary"),
    ("GET", "/v1/games/abc/events", Response(json.dumps({"events": []}), 200, headers=REQUEST_ID,
                                             mimetype="application/json"),
     "events without Vary"),
    ("GET", "/v1/games/abc", answer(STATE, 200, headers={"ETag": "2"}), "an unquoted ETag"),
    ("GET", "/v1/games/abc", answer(b"", 304), "a 304 without ETag"),
    ("GET", "/v1/games/abc/events", answer(b"", 304, headers={"ETag": '"2"'}),
     "a 304 where no ETag is answered"),
    ("GET", "/v1/games/abc", Response(json.dumps(STATE), 200, headers={"ETag": '"2"', **BY_CALLER},
                                      mimetype="application/json"), "no X-Request-ID"),
    ("GET", "/v1/games/abc", answer({**STATE, "deck": ["0-0"]}, 200, headers={"ETag": '"2"'}),
     "a hidden field leaks into the state"),
    ("GET", "/v1/games/abc", answer({**STATE, "hand": ["S-5"]}, 200, headers={"ETag": '"2"'}),
     "a tile against R2"),
    ("GET", "/v1/games/abc", answer({**STATE, "legal_moves": [{"action": "play",
                                                                "tile": "9-9"}]},
                                    200, headers={"ETag": '"2"'}), "a legal play with no expose"),
    ("GET", "/v1/games/abc", answer({**STATE, "players": [{**PLAYERS[1], "level": None}]}, 200,
                                    headers={"ETag": '"2"'}), "an AI seat without a level"),
    ("GET", "/v1/games/abc/events", answer({"events": [{**HAND_STARTED, "hash": "0" * 64}]},
                                           200), "an event with its hash but without its deck"),
    ("GET", "/v1/games/abc/export", answer({"game_id": "abc", "events": [
        {**HAND_STARTED, "hash": "a" * 64, "data": {k: v for k, v in DEALT.items()
                                                     if k != "salt"}}]}, 200),
     "an event with its hash but without its salt"),
    ("GET", "/v1/games/abc/events", answer({"events": [{**HAND_STARTED, "data": {
        k: v for k, v in HAND_STARTED["data"].items() if k != "commitment"}}]}, 200),
     "hand_started without its commitment"),
    ("GET", "/v1/games/abc/events", answer({"events": [{**HAND_STARTED, "seq": 0}]}, 200),
     "seq counts from 1"),
    ("GET", "/v1/games/abc/events", answer({"events": [{**HAND_STARTED, "data": {}}]}, 200),
     "hand_started data without hand_number"),
    ("GET", "/v1/games/abc/export", answer({"game_id": "abc", "events": [HAND_STARTED]}, 200),
     "an export event without its hash"),
    ("POST", "/v1/games", answer({"game_id": "g", "version": 2, "seats": [
        {"seat": 0, "name": "Ann", "kind": "human"}]}, 201, headers={"Location": "/v1/games/g"}),
     "a human seat created without a token"),
    ("POST", "/v1/games", answer({"game_id": "g", "version": 2, "seats": []}, 201),
     "a creation without Location"),
    ("GET", "/healthz", answer({"status": "ok"}, 200), "health without store"),
    ("GET", "/v1/nowhere", answer({"ok": True}, 200), "an unknown path that answers 200"),
    ("DELETE", "/v1/games", problem(405, "method-not-allowed"), "a 405 without Allow"),
    ("DELETE", "/v1/games", problem(404, "not-found"), "an unknown method that answers 404"),
])
def test_a_mismatch_fails(method: str, path: str, response: Response, why: str) -> None:
    with pytest.raises(ContractViolation):
        check_response(method, path, response)


def test_good_answers_of_each_kind_pass() -> None:
    etag = {"ETag": '"2"'}
    check_response("GET", "/v1/games/abc", answer(STATE, 200, headers=etag))
    check_response("GET", "/v1/games/abc", answer(b"", 304, headers=etag))
    check_response("GET", "/v1/games/abc/state?version=2", answer(b"", 304, headers=etag))
    spectator = {k: v for k, v in STATE.items() if k not in ("seat", "hand", "legal_moves")}
    check_response("GET", "/v1/games/abc?x=1", answer(spectator, 200, headers=etag))
    first = {**spectator, "version": 1, "hand_number": None, "opening_double": None,
             "turn": None, "boneyard_count": 0}
    check_response("GET", "/v1/games/abc/state?version=1", answer(first, 200, headers={
        "ETag": '"1"'}))
    check_response("GET", "/v1/games/abc/events", answer({"events": [HAND_STARTED]}, 200))
    full = {**HAND_STARTED, "hash": "a" * 64, "data": DEALT}
    check_response("GET", "/v1/games/abc/export", answer({"game_id": "abc", "events": [full]},
                                                         200))
    check_response("POST", "/v1/games", answer({"game_id": "g", "version": 2, "seats": [
        {"seat": 0, "name": "Ann", "kind": "human", "token": "g.t"},
        {"seat": 1, "name": "Bot", "kind": "ai", "level": "greedy"}]}, 201,
        headers={"Location": "/v1/games/g"}),
        request_body={"players": [{"name": "Ann", "kind": "human"},
                                  {"name": "Bot", "kind": "ai", "level": "greedy"}]})
    unavailable = problem(503, "store-unavailable")
    unavailable.headers["Retry-After"] = "1"
    check_response("POST", "http://localhost/v1/games", unavailable)
    check_response("GET", "/healthz", answer({"status": "ok", "store": "reachable"}, 200))
    check_response("GET", "/metrics", answer("# HELP x\n", 200, "text/plain"))
    not_allowed = problem(405, "method-not-allowed")
    not_allowed.headers["Allow"] = "POST, OPTIONS"
    check_response("DELETE", "/v1/games", not_allowed)
    check_response("GET", "/v1/nowhere", problem(404, "not-found"))


def gzipped(response: Response) -> Response:
    """`response` with its body gzipped, as the service sends it to a client that takes gzip."""
    response.set_data(zlib.compress(response.get_data(), 1, wbits=31))
    response.headers["Content-Encoding"] = "gzip"
    response.vary.add("Accept-Encoding")
    return response


def test_a_gzipped_answer_is_checked_decoded_and_only_where_gzip_was_taken() -> None:
    takes = {"Accept-Encoding": "gzip"}
    etag = {"ETag": '"2"'}
    check_response("GET", "/v1/games/abc", gzipped(answer(STATE, 200, headers=etag)),
                   headers=takes)
    with pytest.raises(ContractViolation, match="did not take gzip"):
        check_response("GET", "/v1/games/abc", gzipped(answer(STATE, 200, headers=etag)))
    with pytest.raises(ContractViolation, match="turn"):  # the body, once decoded
        check_response("GET", "/v1/games/abc", gzipped(answer(
            {**STATE, "turn": "0"}, 200, headers=etag)), headers=takes)
    unmarked = gzipped(answer(STATE, 200, headers=etag))
    unmarked.headers["Vary"] = "Authorization"
    with pytest.raises(ContractViolation, match="Vary: Accept-Encoding"):
        check_response("GET", "/v1/games/abc", unmarked, headers=takes)
    garbled = answer(STATE, 200, headers={**etag, "Content-Encoding": "gzip",
                                          "Vary": "Authorization, Accept-Encoding"})
    with pytest.raises(ContractViolation, match="not gzip"):
        check_response("GET", "/v1/games/abc", garbled, headers=takes)


def test_a_2xx_to_a_body_the_spec_refuses_fails() -> None:
    created = answer({"game_id": "g", "version": 2, "seats": []}, 201,
                     headers={"Location": "/v1/games/g"})
    check_response("POST", "/v1/games", created, request_body={
        "players": [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]})
    with pytest.raises(ContractViolation, match="refuses the request body"):
        check_response("POST", "/v1/games", created, request_body={"players": []})
    with pytest.raises(ContractViolation, match="refuses the request body"):
        check_response("POST", "/v1/games/abc/moves", answer(STATE, 200, headers={
            "ETag": '"2"'}), request_body={"action": "draw", "tile": "0-0"})


def endless() -> Iterator[bytes]:
    yield b"retry: 2000\n\n"
    raise AssertionError("the checker read an event stream's body")


def test_an_event_stream_is_checked_by_status_and_headers_without_reading_it() -> None:
    headers = {**REQUEST_ID, **BY_CALLER, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    check_response("GET", "/v1/games/abc/stream",
                   Response(endless(), 200, headers=headers, mimetype="text/event-stream"))
    with pytest.raises(ContractViolation):  # the proxy would buffer it
        check_response("GET", "/v1/games/abc/stream", Response(
            endless(), 200, headers=REQUEST_ID, mimetype="text/event-stream"))
    with pytest.raises(ContractViolation):  # an event stream where JSON is documented
        check_response("GET", "/v1/games/abc/events",
                       Response(endless(), 200, headers=headers, mimetype="text/event-stream"))


TURN = '{"version":2,"turn":0,"status":"playing"}'
SEAT_AS_TEXT = TURN.replace('"turn":0', '"turn":"0"')
EVENT_FRAME = f"id: 2\nevent: hand_started\ndata: {json.dumps(HAND_STARTED)}\n\n"


def test_a_streams_frames_fit_their_schemas() -> None:
    text = f"retry: 2000\n\n{EVENT_FRAME}event: turn\ndata: {TURN}\n\n: keep-alive\n\n"
    frames = assert_fits_stream(text + "id: 3\nevent: pas")  # the last frame is not over
    assert [f["event"] for f in frames] == ["hand_started", "turn"]
    assert frames[1]["id"] == "2"  # a turn frame has no id: the event's before it stays
    assert assert_fits_stream(f"event: turn\ndata: {TURN}\n\n") == [
        {"event": "turn", "data": TURN}]  # nothing sent before it: no last event id yet


@pytest.mark.parametrize(("text", "why"), [
    ("event: turn\ndata: {\"version\":2,\"turn\":0}\n\n", "a turn without its status"),
    ("event: turn\ndata: {\"version\":0,\"turn\":0,\"status\":\"playing\"}\n\n",
     "version 0"),
    (f"event: turn\ndata: {json.dumps(HAND_STARTED)}\n\n", "an event in a turn frame"),
    (f"id: 2\nevent: turn\ndata: {json.dumps(HAND_STARTED)}\n\n", "the same, with an id"),
    (f"id: 2\nevent: tile_played\ndata: {json.dumps(HAND_STARTED)}\n\n", "the wrong event"),
    (f"id: 3\nevent: hand_started\ndata: {json.dumps(HAND_STARTED)}\n\n", "the wrong id"),
    (f"event: hand_started\ndata: {json.dumps(HAND_STARTED)}\n\n", "an event without an id"),
    (f"id: 2\ndata: {json.dumps(HAND_STARTED)}\n\n", "an event frame without its type"),
    (EVENT_FRAME.replace('"seat": null, ', ""), "an event without its seat"),
    (f"event: turn\ndata: {SEAT_AS_TEXT}\n\n", "a seat as a string"),
])
def test_a_frame_that_breaks_its_schema_fails(text: str, why: str) -> None:
    with pytest.raises(ContractViolation):
        assert_fits_stream(text)


def test_assert_fits_schema_checks_one_component() -> None:
    assert_fits_schema({"action": "pass"}, "Move")
    with pytest.raises(ContractViolation, match="not a Move"):
        assert_fits_schema({"action": "pass", "tile": "0-0"}, "Move")


# Typed apart: states, events and created seats (issue 18) ---------------

def test_a_seat_state_and_a_spectator_state_are_told_apart() -> None:
    spectator = {k: v for k, v in STATE.items() if k not in schemas.OWN_FIELDS}
    assert_fits_schema(STATE, "SeatState")
    assert_fits_schema(spectator, "SpectatorState")
    for instance, other in ((STATE, "SpectatorState"), (spectator, "SeatState")):
        with pytest.raises(ContractViolation):
            assert_fits_schema(instance, other)
    for field in schemas.OWN_FIELDS:  # a seat's state has all three, a spectator's none
        with pytest.raises(ContractViolation):
            assert_fits_schema({k: v for k, v in STATE.items() if k != field}, "State")


EVENTS = {
    "GameCreatedEvent": {"type": "game_created", "seat": None, "data": {
        "players": [{"name": "Ann", "kind": "human"}],
        "rules": {"variant": "spinner", "hands": 1, "opening": "draw"}}},
    "HandStartedEvent": HAND_STARTED,
    "TileDrawnEvent": {"type": "tile_drawn", "seat": 1, "data": {"reason": "draw"}},
    "TilePlayedEvent": {"type": "tile_played", "seat": 0, "data": {
        "tile": "9-9", "end": None, "expose": 9, "new_ends": ["e1", "e2", "e3", "e4"]}},
    "PassedEvent": {"type": "passed", "seat": 1, "data": {}},
    "ObligationLiftedEvent": {"type": "obligation_lifted", "seat": None, "data": {
        "ends": ["e1"]}},
    "HandEndedEvent": {"type": "hand_ended", "seat": None, "data": {
        "hand_number": 1, "ended_by": "domino", "points": [0, 5], "winner": 0,
        "hands": [[], ["0-5"]]}},
    "GameEndedEvent": {"type": "game_ended", "seat": None, "data": {
        "totals": [0, 5], "winners": [0]}},
    "TurnTimedOutEvent": {"type": "turn_timed_out", "seat": 0, "data": {}},
    "SeatLeftEvent": {"type": "seat_left", "seat": 1, "data": {"level": "random"}},
    "LeaderDrawnEvent": {"type": "leader_drawn", "seat": None, "data": {
        "tiles": ["4-6", "5-5"]}},
}
"""A redacted event of each type, by the name of its schema."""


@pytest.mark.parametrize("name", EVENTS)
def test_each_event_fits_its_own_schema_and_no_other(name: str) -> None:
    event = {"seq": 3, "at": "2024-05-01T12:00:00.000Z", **EVENTS[name]}
    assert_fits_schema(event, "Event")
    for other in EVENTS:
        if other == name:
            assert_fits_schema(event, other)
            continue
        with pytest.raises(ContractViolation):
            assert_fits_schema(event, other)
        if EVENTS[other]["data"] == event["data"]:  # both {}: passed, turn_timed_out
            continue
        with pytest.raises(ContractViolation):  # its data is typed by its type
            assert_fits_schema({**event, "data": EVENTS[other]["data"]}, "Event")


@pytest.mark.parametrize(("union", "field"), [("Event", "type"), ("CreatedSeat", "kind"),
                                              ("Rules", "variant")])
def test_a_union_names_its_branch_by_a_discriminator_each_branch_pins(union: str,
                                                                      field: str) -> None:
    """What generators read (openapi-typescript the mapping, openapi-python-client each
    branch's `const`) names one branch for each value."""
    component = spec_dict()["components"]["schemas"][union]
    mapping = component["discriminator"]["mapping"]
    assert component["discriminator"]["propertyName"] == field
    assert sorted(mapping.values()) == sorted(b["$ref"] for b in component["oneOf"])
    for value, ref in mapping.items():
        pinned = [part["properties"][field] for part in [_resolve({"$ref": ref}),
                                                         *_resolve({"$ref": ref}).get("allOf", [])]
                  if field in part.get("properties", {})]
        assert pinned == [{"type": "string", "const": value}], ref
    if union == "Event":
        assert set(mapping) == set(spec_dict()["components"]["schemas"]["EventType"]["enum"])


def defaults_in(node: Any, seen: frozenset[str] = frozenset()) -> Iterator[str]:
    """Yield the path of every `default` in a schema, following its `$ref`s."""
    if isinstance(node, list):
        for item in node:
            yield from defaults_in(item, seen)
    elif isinstance(node, dict):
        if "default" in node:
            yield str(node)
        ref = node.get("$ref")
        if ref and ref not in seen:
            yield from defaults_in(_resolve({"$ref": ref}), seen | {ref})
        for key, value in node.items():
            if key != "$ref":
                yield from defaults_in(value, seen)


def test_no_request_schema_has_a_default_that_generators_would_make_required() -> None:
    bodies = [op["requestBody"] for item in spec_dict()["paths"].values()
              for method, op in item.items() if method in HTTP_METHODS and "requestBody" in op]
    assert len(bodies) == 3  # the creation, the move and the leave
    assert list(defaults_in(bodies)) == []
    assert list(defaults_in({"$ref": "#/components/parameters/After"}))  # it does find them


def test_whatever_a_spectator_may_call_needs_no_credentials_in_generated_clients() -> None:
    """An operation that lists security of its own, even with `{}` among it, asks for an
    AuthenticatedClient in openapi-python-client; those open to anyone name none, and the
    default lets anyone in."""
    assert {} in spec_dict()["security"]
    for path, item in spec_dict()["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS and path.startswith("/v1/"):
                assert {} not in operation.get("security", [None]), (method, path)
    open_to_anyone = {(m, p) for p, item in spec_dict()["paths"].items() for m, op in item.items()
                      if m in HTTP_METHODS and "security" not in op}
    assert open_to_anyone == {(m, f"/v1/games{p}") for m, p in [
        ("post", ""), ("get", "/{game_id}"), ("get", "/{game_id}/events"),
        ("get", "/{game_id}/state"), ("get", "/{game_id}/stream"), ("get", "/{game_id}/export")]}


def test_the_spec_links_the_rules_and_names_only_files_clients_have() -> None:
    assert spec_dict()["externalDocs"]["url"] == "docs/RULES.md"
    named = set(re.findall(r"[\w./-]+\.md\b", SPEC_PATH.read_text(encoding="utf-8")))
    assert "docs/RULES.md" in named
    for name in named:  # a path from the project root, or a file of docs/
        assert any((folder / name).is_file() for folder in (ROOT, ROOT / "docs")), name


# The checker: ContractClient checks every answer -------------------------

@pytest.fixture
def canned() -> Flask:
    """A stand-in app at the spec's paths whose answers the tests choose: it exercises the
    ContractClient, never the service."""
    app = Flask("canned", static_folder=None)
    app.response_class = EmptyUntyped  # as the service's: an empty answer names no type
    replies: dict[str, Response] = {}
    app.config["replies"] = replies

    @app.get("/v1/games/<game_id>")
    def game(game_id: str) -> Response:
        return replies["game"]

    @app.post("/v1/games/<game_id>/moves")
    def move(game_id: str) -> Response:
        return replies["move"]

    @app.after_request
    def request_id(response: Response) -> Response:
        response.headers.setdefault("X-Request-ID", "canned")
        return response

    return app


def test_the_contract_client_checks_every_answer(canned: Flask) -> None:
    client = ContractClient(canned.test_client())
    replies = canned.config["replies"]
    replies["game"] = answer(STATE, 200, headers={"ETag": '"2"'})
    assert client.get("/v1/games/abc").json["version"] == 2
    assert client.head("/v1/games/abc").status_code == 200
    assert client.options("/v1/games/abc").status_code == 200
    plain = Flask("plain")  # Flask's own answer to OPTIONS: empty, but text/html
    plain.add_url_rule("/v1/games/<game_id>", view_func=lambda game_id: game_id)
    with pytest.raises(ContractViolation, match="no Content-Type"):
        ContractClient(plain.test_client()).options("/v1/games/abc")
    replies["game"] = answer({**STATE, "turn": "0"}, 200, headers={"ETag": '"2"'})
    with pytest.raises(ContractViolation, match="turn"):
        client.get("/v1/games/abc")
    with pytest.raises(ContractViolation, match="405"):  # Flask's own 405 is HTML here
        client.delete("/v1/games/abc")
    replies["move"] = answer(STATE, 200, headers={"ETag": '"3"'})
    assert client.post("/v1/games/abc/moves", json={"action": "draw"}).status_code == 200
    with pytest.raises(ContractViolation, match="refuses the request body"):
        client.post("/v1/games/abc/moves", json={"action": "jump"})
    with client as inside, pytest.raises(ContractViolation):  # still checked inside `with`
        inside.get("/v1/games/abc")


def object_shapes(node: dict[str, Any]) -> list[tuple[set[str], bool]]:
    """The objects a schema allows: one per `oneOf` branch, or itself; each as its property
    names (its `allOf` parts' too) and whether it is closed to any other property."""
    node = _resolve(node)
    if "oneOf" in node:
        return [shape for branch in node["oneOf"] for shape in object_shapes(branch)]
    names = set(node.get("properties", {}))
    for part in node.get("allOf", []):
        names |= set(_resolve(part).get("properties", {}))
    closed = False in (node.get("additionalProperties"), node.get("unevaluatedProperties"))
    return [(names, closed)]


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        kind, name = node["$ref"].split("/")[-2:]
        node = spec_dict()["components"][kind][name]
    return node


def test_the_spec_file_is_at_the_project_root() -> None:
    assert SPEC_PATH.name == "openapi.yaml" and (SPEC_PATH.parent / "pyproject.toml").exists()
