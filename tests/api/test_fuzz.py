"""Fuzzing from the contract: schemathesis sends the real app (in process, over WSGI, on the real
test Redis) requests generated from openapi.yaml and checks every answer against it: no 5xx;
status, content type, headers and body as documented; a request the spec refuses refused; a
token required where the spec requires one; an undocumented method answered 405.

* `test_operation`, stateless: every operation through schemathesis' examples, coverage and
  fuzzing phases, with valid and invalid data. Three quarters of the requests on a
  `{game_id}` path go to a real game (just dealt, with an AI seat, mid-hand, or a finished
  match) as one of its seats, a spectator, a seat of another game, or with a forged or
  malformed token; the rest keep the generated id (404).
* `test_stateful`: schemathesis' state machine over the links of openapi.yaml (create a game,
  then read it, move in it as seat 0, read its log, its past states, its stream, its export),
  with rules of our own: create an all-human game, play legal moves from `legal_moves` (each
  must be 200), fuzzed moves with real seat tokens and `If-Match`, reads as every caller.
* `test_a_number_beyond_any_log_is_no_failure`: the 5xx answers the fuzzing found, pinned.
* `test_the_fuzzing_reached_real_games`: the statuses seen prove that the fuzzing got past the
  404s and the token checks.

Bounded for CI: few examples, Hypothesis derandomized and schemathesis seeded, so a run is
reproducible (but for the deals of games schemathesis makes without a seed); about 20 s on
one core.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
import schemathesis
import yaml
from flask import Flask
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.generation.meta import CoverageScenario, TestPhase
from schemathesis.generation.stateful.state_machine import APIStateMachine, StepInput
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ensure_resource_availability,
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import EVENT_STREAM, assert_fits_stream
from tests.api.driver import auth, create, play_to_end

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
SEED = 20240611
STREAM_READ_S = 0.25  # how long a request reads a live event stream (it never ends by itself)
STREAM = "GET /v1/games/{game_id}/stream"
OPENING_MOVES = 8  # legal moves each stateful run starts with (test_stateful)
MOVES = "POST /v1/games/{game_id}/moves"

CONFIG = schemathesis.Config.from_dict({
    "seed": SEED,
    "generation": {"mode": "all", "deterministic": True, "database": "none"},
})
schema = schemathesis.openapi.from_path(SPEC_PATH, config=CONFIG)

STATUSES: Counter[tuple[str, int]] = Counter()  # (operation label, status): the answers seen


# Checks --------------------------------------------------------------------

def sse_frames_conformance(ctx: Any, response: Any, case: Case) -> bool | None:
    """Each frame of a `text/event-stream` answer fits `StreamFrame`, its `data` the schema
    its `event` names, and an event frame's `id` is its event's `seq`.

    schemathesis' `response_schema_conformance` reads the stream's `schema` as one parsed
    frame's (`{id, event, data}`), as the spec does; this check also reads each `data` as
    the JSON it is and ties each event to its frame's id."""
    if not response.headers.get("content-type", [""])[0].startswith(EVENT_STREAM):
        return None
    assert_fits_stream(response.text)
    return True


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance,
          negative_data_rejection, ignored_auth, unsupported_method, missing_required_header]
STREAM_CHECKS = [*CHECKS, sse_frames_conformance]


def checks_for(case: Case, stateful: bool = False) -> list[Any]:
    """The checks for the answer to `case` (in a stateful run, also: a created game is
    there at once)."""
    checks = STREAM_CHECKS if case.operation.label == STREAM else CHECKS
    return [*checks, ensure_resource_availability] if stateful else list(checks)


# Real games ----------------------------------------------------------------

@dataclass(frozen=True)
class Game:
    """A real game and its human seats' tokens."""

    game_id: str
    tokens: tuple[str, ...]


GAMES: list[Game] = []  # the real games of `live_app`, which the stateless fuzzing aims at


@pytest.fixture(scope="module")
def live_app(redis_url: str) -> Iterator[Flask]:
    """The real app over the flushed test Redis, with four real games in it."""
    with redis.Redis.from_url(redis_url) as client:
        client.flushdb()
    # gzip_min_bytes=0: schemathesis's in-process transport asks for gzip (requests' default
    # headers) but, unlike requests over HTTP, does not decode it (test_compression.py does)
    services = build(Settings(redis_url=redis_url, rate_limit_per_token=0,
                              rate_limit_per_address=0, stream_keepalive_s=0.05,
                              ai_games_per_client=10**6, gzip_min_bytes=0))
    app = create_app({"TESTING": True}, services=services)
    http = app.test_client()
    fresh = create(http, seats=2, seed=1)
    with_ai = create(http, seats=3, seed=2, ai={2: "random"}, opening="next_lower")
    mid_hand = create(http, seats=2, hands=2, seed=3)
    rng = random.Random(SEED)
    for _ in range(6):
        _play_one_legal_move(http, *mid_hand, rng)
    finished = create(http, seats=2, seed=4)
    play_to_end(http, *finished, rng)
    GAMES[:] = [Game(game_id, tuple(tokens.values()))
                for game_id, tokens in (fresh, with_ai, mid_hand, finished)]
    yield app
    GAMES.clear()


def _play_one_legal_move(http: Any, game_id: str, tokens: dict[int, str],
                         rng: random.Random) -> None:
    turn = http.get(f"/v1/games/{game_id}").json["turn"]
    moves = http.get(f"/v1/games/{game_id}", headers=auth(tokens[turn])).json["legal_moves"]
    answer = http.post(f"/v1/games/{game_id}/moves", json=rng.choice(moves),
                       headers=auth(tokens[turn]))
    assert answer.status_code == 200, answer.json


# Stateless -----------------------------------------------------------------

AIM = "real-game:"  # a `game_id` placeholder, "real-game:<pick>:<who>", filled in when sent
CALLERS = 9  # the kinds of caller `who` names; see `_resolve`


def _aimed(case: Case, where: int, pick: int, who: int) -> Case:
    """Mark `case` to go to a real game, unless `where` is 3 (a quarter of the cases). The
    coverage phase makes its cases at collection, before `live_app` makes the games, so the
    game and the token are filled in by `_resolve` when the case is sent."""
    if where != 3:
        case.path_parameters = {**(case.path_parameters or {}), "game_id": f"{AIM}{pick}:{who}"}
    return case


def _resolve(case: Case) -> bool:
    """Fill in a marked case's game (the `pick`-th) and caller `who`: 0-3 one of the game's
    seats, 4 a spectator, 5 as generated (no token, or whatever schemathesis made, an API key
    too), 6 a seat of another game (403), 7 a forged token of this game (401), 8 no bearer
    token (401). Return whether the caller is a seat of the game."""
    placeholder = (case.path_parameters or {}).get("game_id")
    if not isinstance(placeholder, str) or not placeholder.startswith(AIM):
        return False
    pick, who = (int(n) for n in placeholder.removeprefix(AIM).split(":"))
    game = GAMES[pick % len(GAMES)]
    case.path_parameters = {**case.path_parameters, "game_id": game.game_id}
    if who == 5:
        return False
    if _without_authorization(case):  # a case about a missing token sends none, as a spectator
        who = 4
    headers = {k: v for k, v in (case.headers or {}).items()  # an aimed caller sends no API
               if k.lower() not in ("authorization", "x-api-key")}  # key: a made-up one is 401
    if who <= 3:
        headers["Authorization"] = f"Bearer {game.tokens[pick // len(GAMES) % len(game.tokens)]}"
    elif who == 6:
        headers["Authorization"] = f"Bearer {GAMES[(pick + 1) % len(GAMES)].tokens[0]}"
    elif who == 7:
        headers["Authorization"] = f"Bearer {game.game_id}.forged-{pick}"
    elif who == 8:
        headers["Authorization"] = f"Token {game.tokens[0]}"
    case.headers = headers
    return who <= 3


def _without_authorization(case: Case) -> bool:
    """Whether `case` is the coverage phase's request without its required Authorization,
    whose answer must be 401 (schemathesis' `missing_required_header`)."""
    data = case.meta.phase.data if case.meta else None
    return getattr(data, "scenario", None) == CoverageScenario.MISSING_PARAMETER \
        and str(getattr(data, "parameter", "")).lower() == "authorization"


def aim_fuzzed_cases(context: Any, case: Case) -> st.SearchStrategy[Case]:
    """`flatmap_case` hook (fuzzing phase): Hypothesis picks the game and the caller."""
    if "game_id" not in (case.path_parameters or {}):
        return st.just(case)
    return st.tuples(st.integers(0, 3), st.integers(0, 23), st.integers(0, CALLERS - 1)).map(
        lambda choice: _aimed(case, *choice))


# One seeded Random an operation, so that what one operation's cases draw does not hang on
# how many cases the others have (a parameter added to one would re-aim them all)
_plans: dict[str, random.Random] = {}


def aim_listed_cases(context: Any, case: Case) -> Case:
    """`map_case` hook for the cases made at collection (coverage and examples phases), which
    draw nothing from Hypothesis: the games and callers come from a seeded Random."""
    if (case.meta is None or case.meta.phase.name == TestPhase.FUZZING
            or "game_id" not in (case.path_parameters or {})):
        return case
    plan = _plans.setdefault(case.operation.label, random.Random(f"{SEED} {case.operation.label}"))
    return _aimed(case, plan.randrange(4), plan.randrange(24), plan.randrange(CALLERS))


@schema.hooks.apply(aim_fuzzed_cases, name="flatmap_case")
@schema.hooks.apply(aim_listed_cases, name="map_case")
@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_operation(case: Case, live_app: Flask) -> None:
    checks = checks_for(case)
    if _resolve(case):  # a real seat token, which schemathesis takes for one it generated:
        checks.remove(ignored_auth)  # it would call a 2xx ignored auth (a ticket's, say)
    response = case.call_and_validate(app=live_app, checks=checks, timeout=STREAM_READ_S)
    STATUSES[case.operation.label, response.status_code] += 1


# What the fuzzing found ----------------------------------------------------

HUGE = [str(2**64), "9" * 5000]  # past Redis' stream ids; past int()'s 4300 digits


@pytest.mark.parametrize("huge", HUGE, ids=["2**64", "5000 digits"])
@pytest.mark.parametrize(("path", "query", "headers", "status"), [
    ("/v1/games/{game_id}/events", "after", {}, 200),  # was 500
    ("/v1/games/{game_id}/stream", "after", {}, 200),  # was a 200 head, then a crash
    ("/v1/games/{game_id}/stream", None, {"Last-Event-ID": "{huge}"}, 200),  # the same
    ("/v1/games/{game_id}/state", "version", {}, 404),  # was 500 with 5000 digits
    ("/v1/games/{game_id}/moves", None, {"If-Match": '"{huge}"'}, 412),  # the same
], ids=["events-after", "stream-after", "stream-last-event-id", "state-version", "if-match"])
def test_a_number_beyond_any_log_is_no_failure(live_app: Flask, path: str, query: str | None,
                                               headers: dict[str, str], status: int,
                                               huge: str) -> None:
    """An event number or version that no log reaches is valid, and answered as documented."""
    game = GAMES[0]
    method = "POST" if path.endswith("/moves") else "GET"
    case = schema[path][method].Case(
        path_parameters={"game_id": game.game_id},
        query={query: huge} if query else {},
        headers={"Authorization": f"Bearer {game.tokens[0]}",
                 **{name: value.format(huge=huge) for name, value in headers.items()}},
        **({"body": {"action": "pass"}, "media_type": "application/json"}
           if method == "POST" else {}))
    response = case.call_and_validate(app=live_app, checks=checks_for(case),
                                      timeout=STREAM_READ_S)
    assert response.status_code == status
    if path.endswith("/events"):
        assert response.json() == {"events": []}


# Stateful ------------------------------------------------------------------

def _without_deal_dependent_links() -> dict[str, Any]:
    """openapi.yaml without the links whose presence hangs on the (random) deal: `PostLegalMove`
    (whether a state lists legal moves, or a move is refused) and those of a move refused out
    of turn (409) or for a stale version (412). Hypothesis calls draws that hang on them flaky;
    `play_legal_moves` plays legal moves here instead (the CLI run of
    tests/integration/test_outside_fuzzer.py follows those links)."""
    spec: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text())
    move_answers = spec["paths"][MOVES.split(" ")[1]]["post"]["responses"]
    for answer in (spec["components"]["responses"]["State"], move_answers["422"]):
        answer["links"].pop("PostLegalMove")
    for status in ("409", "412"):
        move_answers[status].pop("links")
    return spec


def machine_for(app: Flask) -> type[APIStateMachine]:
    """schemathesis' state machine over the links of openapi.yaml, calling `app`, with rules
    of our own that play in the games made."""
    stateful_schema = schemathesis.openapi.from_dict(_without_deal_dependent_links(),
                                                     config=CONFIG)
    stateful_schema.app = app  # also for the checks that send requests of their own
    base = stateful_schema.as_state_machine()
    create_op = stateful_schema["/v1/games"]["POST"]
    moves_op = stateful_schema["/v1/games/{game_id}/moves"]["POST"]
    game_op = stateful_schema["/v1/games/{game_id}"]["GET"]
    events_op = stateful_schema["/v1/games/{game_id}/events"]["GET"]
    state_op = stateful_schema["/v1/games/{game_id}/state"]["GET"]

    class Machine(base):  # type: ignore[valid-type, misc]
        def setup(self) -> None:
            self.games: dict[str, dict[int, str]] = {}  # game id -> seat -> token, as made
            self.playable: list[str] = []  # the games whose every seat is human

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            return {"app": app, "timeout": STREAM_READ_S}

        def before_call(self, case: Case) -> None:
            """Send no If-None-Match: whether it names the version hangs on the random deal,
            and a 304 has no links to follow, so the machine's next draws would hang on it too
            (Hypothesis refuses that as flaky). test_conditional_reads.py tests 304s."""
            super().before_call(case)
            case.headers = {k: v for k, v in (case.headers or {}).items()
                            if k.lower() != "if-none-match"}

        def after_call(self, response: Any, case: Case) -> None:
            super().after_call(response, case)
            STATUSES[f"stateful {case.operation.label}", response.status_code] += 1
            if case.operation is create_op and response.status_code == 201:
                created = response.json()
                tokens = {s["seat"]: s["token"] for s in created["seats"] if "token" in s}
                self.games[created["game_id"]] = tokens
                if len(tokens) == len(created["seats"]):
                    self.playable.append(created["game_id"])

        def validate_response(self, response: Any, case: Case,
                              additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=checks_for(case, stateful=True),
                                   additional_checks=additional_checks,
                                   transport_kwargs=kwargs or None, recorder=self.recorder)

        def send(self, case: Case) -> Any:
            """Send a case of our own, recorded and checked as the machine's own steps are."""
            self.recorder.record_case(case=case)
            return self.step(StepInput.initial(case)).response

        def state(self, game_id: str, token: str | None = None) -> dict[str, Any]:
            """The game's state as `token`'s seat (or a spectator) sees it."""
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            answer = self.send(game_op.Case(path_parameters={"game_id": game_id},
                                            headers=headers))
            assert answer.status_code == 200
            state: dict[str, Any] = answer.json()
            return state

        def pick(self, data: st.DataObject) -> tuple[str, dict[int, str]]:
            """One of the games made so far, and its tokens."""
            # from the games in the order made: a draw must not hang on their (random) ids
            game_id = data.draw(st.sampled_from(list(self.games)), label="game")
            return game_id, self.games[game_id]

        @precondition(lambda self: len(self.playable) < 2)
        @rule(seats=st.integers(2, 4), hands=st.integers(1, 2),
              opening=st.sampled_from(["draw", "next_lower"]), seed=st.integers(0, 999))
        def create_human_game(self, seats: int, hands: int, opening: str, seed: int) -> None:
            body = {"players": [{"name": f"P{s}", "kind": "human"} for s in range(seats)],
                    "rules": {"hands": hands, "opening": opening}, "seed": seed}
            answer = self.send(create_op.Case(body=body, media_type="application/json"))
            assert answer.status_code == 201

        @precondition(lambda self: self.playable)
        @rule(data=st.data(), count=st.integers(1, 60), seed=st.integers(0, 2**16),
              conditional=st.booleans())
        def play_legal_moves(self, data: st.DataObject, count: int, seed: int,
                             conditional: bool) -> None:
            """Play up to `count` moves from `legal_moves` in a game whose every seat is
            human; each must be 200. A seeded Random chooses them: what Hypothesis draws
            must not hang on the answers (a game made without a seed is dealt at random)."""
            game_id = data.draw(st.sampled_from(self.playable), label="game")
            self.play(game_id, count, random.Random(seed), conditional)

        @initialize(seed=st.integers(0, 999))
        def start_with_a_game_in_play(self, seed: int) -> None:
            """Every run starts with a human game some moves in, so that the fuzzing meets
            games in play (obligations, draws, passes), not only games just dealt."""
            self.create_human_game(2, 1, "draw", seed)
            self.play(self.playable[-1], OPENING_MOVES, random.Random(seed), True)

        def play(self, game_id: str, count: int, rng: random.Random, conditional: bool) -> None:
            """Play up to `count` moves of the all-human `game_id`, each chosen by `rng` from
            `legal_moves`; each must be 200."""
            tokens = self.games[game_id]
            for _ in range(count):
                public = self.state(game_id)
                if public["status"] != "playing":
                    return
                token = tokens[public["turn"]]
                mine = self.state(game_id, token)
                move = rng.choice(mine["legal_moves"])
                headers = {"Authorization": f"Bearer {token}"}
                if conditional:
                    headers["If-Match"] = f'"{mine["version"]}"'
                answer = self.send(moves_op.Case(path_parameters={"game_id": game_id},
                                                 headers=headers, body=move,
                                                 media_type="application/json"))
                assert answer.status_code == 200, (move, answer.json())

        @precondition(lambda self: self.games)
        @rule(data=st.data(), mode=st.sampled_from(list(GenerationMode)),
              seat=st.integers(0, 7), version=st.none() | st.integers(0, 80))
        def fuzz_a_move(self, data: st.DataObject, mode: GenerationMode, seat: int,
                        version: int | None) -> None:
            """A generated move (valid or not) as a seat of a game made, maybe with If-Match."""
            game_id, tokens = self.pick(data)
            case = data.draw(moves_op.as_strategy(mode, path_parameters={"game_id": game_id}),
                             label="move")
            headers = dict(case.headers or {})
            if seat in tokens:
                headers["Authorization"] = f"Bearer {tokens[seat]}"
            if version is not None:
                headers["If-Match"] = f'"{version}"'
            case.headers = headers
            self.send(case)

        @precondition(lambda self: self.games)
        @rule(data=st.data(),
              caller=st.sampled_from(["seat", "spectator", "other game", "forged"]),
              seat=st.integers(0, 7), after=st.integers(0, 90), version=st.integers(1, 90))
        def read_as(self, data: st.DataObject, caller: str, seat: int, after: int,
                    version: int) -> None:
            """Read a game made, its log and a past state, as one caller."""
            game_id, tokens = self.pick(data)
            token = {"seat": tokens.get(seat), "spectator": None,
                     "other game": GAMES[seat % len(GAMES)].tokens[0],  # of `live_app`
                     "forged": f"{game_id}.forged"}[caller]
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            where = {"game_id": game_id}
            self.send(game_op.Case(path_parameters=where, headers=headers))
            self.send(events_op.Case(path_parameters=where, headers=headers,
                                     query={"after": after}))
            self.send(state_op.Case(path_parameters=where, headers=headers,
                                    query={"version": version}))

    return Machine


def test_stateful(live_app: Flask) -> None:
    machine_for(live_app).run(settings=settings(
        max_examples=20, stateful_step_count=15, deadline=None, derandomize=True,
        database=None, suppress_health_check=list(HealthCheck)))


# What the fuzzing reached --------------------------------------------------

def test_the_fuzzing_reached_real_games() -> None:
    """Past the 404s: real games were read and moved in, by every kind of caller."""
    labels = {label for label, _ in STATUSES}
    stateless = {label for label in labels if not label.startswith("stateful ")}
    if len(stateless) < len(list(schema.get_all_operations())) or stateless == labels:
        pytest.skip("needs the whole module: it reads what the other tests saw")
    seen = {(label.removeprefix("stateful "), status) for label, status in STATUSES}
    for label in ("GET /v1/games/{game_id}", "GET /v1/games/{game_id}/events",
                  "GET /v1/games/{game_id}/state", STREAM):
        assert {(label, s) for s in (200, 401, 403, 404)} <= seen, label
    assert {(MOVES, s) for s in (200, 400, 401, 403, 404, 409, 412, 422)} <= seen
    assert {("GET /v1/games/{game_id}/export", s) for s in (200, 404, 409)} <= seen
    assert {("POST /v1/games", 201), ("POST /v1/games", 400)} <= seen
    assert STATUSES[f"stateful {MOVES}", 200] >= 100  # legal moves: the games got somewhere
