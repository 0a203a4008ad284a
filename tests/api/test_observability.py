"""Operability: Prometheus metrics at /metrics and JSON log lines that carry the request id."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from rq import SimpleWorker

from service.adapters import logs
from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.game.views import view
from service.rules.moves import Move
from tests.api.driver import auth, create

METRICS = ["spinner_http_requests_total", "spinner_http_request_duration_seconds",
           "spinner_moves_total", "spinner_append_conflicts_total", "spinner_replay_seconds",
           "spinner_ai_queue_depth", "spinner_ai_failed_jobs"]


def sample(client: Any, name: str, **labels: str) -> float:
    """The value of one sample in the /metrics text (0 if it is not there yet)."""
    text = client.get("/metrics").get_data(as_text=True)
    return next((s.value for family in text_string_to_metric_families(text)
                 for s in family.samples if s.name == name and s.labels == labels), 0.0)


def test_metrics_is_prometheus_text_naming_every_metric(client):
    create(client, seats=2)
    answer = client.get("/metrics")
    assert answer.status_code == 200 and answer.mimetype == "text/plain"
    families = {f.name for f in text_string_to_metric_families(answer.get_data(as_text=True))}
    names = {n.removesuffix("_total") for n in METRICS}
    assert names <= families


def test_requests_are_counted_by_route_not_by_path(client):
    game_id, _ = create(client, seats=2)
    labels = {"method": "GET", "route": "/v1/games/<game_id>", "status": "200"}
    before = sample(client, "spinner_http_requests_total", **labels)
    client.get(f"/v1/games/{game_id}")
    client.get(f"/v1/games/{game_id}")
    assert sample(client, "spinner_http_requests_total", **labels) == before + 2
    assert game_id not in client.get("/metrics").get_data(as_text=True)


def test_a_method_of_no_known_name_is_counted_as_other(client):
    labels = {"method": "other", "route": "unmatched", "status": "404"}
    before = sample(client, "spinner_http_requests_total", **labels)
    client.open("/nowhere", method="BREW")
    client.open("/nowhere", method="WHEN")
    assert sample(client, "spinner_http_requests_total", **labels) == before + 2
    assert "BREW" not in client.get("/metrics").get_data(as_text=True)


def test_moves_are_counted_by_outcome(client):
    game_id, tokens = create(client, seats=2, seed=7)
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[turn])).json
    outcomes = ("accepted", "rejected_409", "rejected_422")
    before = [sample(client, "spinner_moves_total", outcome=o) for o in outcomes]
    url = f"/v1/games/{game_id}/moves"
    assert client.post(url, json={"action": "pass"}, headers=auth(tokens[turn])).status_code == 422
    assert client.post(url, json=mine["legal_moves"][0],
                       headers=auth(tokens[turn])).status_code == 200
    assert client.post(url, json={"action": "draw"}, headers=auth(tokens[turn])).status_code == 409
    after = [sample(client, "spinner_moves_total", outcome=o) for o in outcomes]
    assert after == [b + 1 for b in before]


def test_a_lost_append_race_counts_as_an_append_conflict(client, services):
    game_id, _ = create(client, seats=2, ai={0: "random", 1: "random"})
    at = client.get(f"/v1/games/{game_id}").json["version"]

    def first_legal(state: Any, seat: int, *_: Any) -> Move:
        return Move.from_dict(view(state, seat)["legal_moves"][0])

    def racing(state: Any, seat: int, log: Any, left_s: float) -> Move:
        assert services.games.ai_turn(game_id, at, first_legal)  # another append lands first
        return first_legal(state, seat, log, left_s)

    before = sample(client, "spinner_append_conflicts_total")
    assert services.games.ai_turn(game_id, at, racing) is False
    assert sample(client, "spinner_append_conflicts_total") == before + 1


def test_replays_are_timed(client):
    game_id, _ = create(client, seats=2)
    before = sample(client, "spinner_replay_seconds_count")
    client.get(f"/v1/games/{game_id}")
    assert sample(client, "spinner_replay_seconds_count") == before + 1


def test_queue_depth_and_failed_jobs_are_read_at_scrape_time(client, services):
    queue = services.queue.queue
    queue.enqueue("service.usecases.tokens.token_game", None)  # fails: None has no .partition
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    assert sample(client, "spinner_ai_failed_jobs") == 1
    assert sample(client, "spinner_ai_queue_depth") == 0
    create(client, seats=2, ai={0: "random", 1: "random"})  # the first AI turn is queued
    assert sample(client, "spinner_ai_queue_depth") == 1


@pytest.fixture
def log_lines(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """Capture what the service logs at INFO and up through the JSON handler; parse each line."""
    caplog.set_level(logging.INFO, logger="spinner")
    stream = io.StringIO()
    handler = logs.json_handler(stream)
    logging.getLogger().addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    logging.getLogger().removeHandler(handler)


def test_each_request_logs_one_access_line_with_its_request_id(client, log_lines):
    game_id, tokens = create(client, seats=2)
    answer = client.get(f"/v1/games/{game_id}",
                        headers={**auth(tokens[0]), "X-Request-ID": "trace-42.a"})
    assert answer.headers["X-Request-ID"] == "trace-42.a"
    [line] = [line for line in log_lines() if line["request_id"] == "trace-42.a"]
    assert line["logger"] == "spinner.access" and line["level"] == "INFO"
    assert (line["method"], line["route"], line["status"]) == ("GET", "/v1/games/<game_id>", 200)
    assert line["duration_ms"] >= 0
    logged = json.dumps(log_lines())
    assert tokens[0] not in logged and tokens[1] not in logged
    assert not re.search(r"\b[0-9S]-[0-9S]\b", json.dumps(
        [{k: v for k, v in line.items() if k != "time"} for line in log_lines()]))


@pytest.mark.parametrize("sent", ["", "has space", "x" * 129, "<script>"])
def test_an_insane_request_id_is_replaced_by_a_fresh_one(client, log_lines, sent):
    answer = client.get("/healthz", headers={"X-Request-ID": sent})
    given = answer.headers["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", given)
    assert [line["request_id"] for line in log_lines()] == [given]


def test_every_line_logged_during_a_request_carries_its_id(log_lines):
    down = build(Settings(redis_url="redis://127.0.0.1:1/0"))  # nothing listens on port 1
    client = create_app({"TESTING": True}, services=down).test_client()
    answer = client.get("/v1/games/abc", headers={"X-Request-ID": "r-503"})
    assert answer.status_code == 503
    lines = log_lines()
    assert {line["logger"] for line in lines} == {"spinner.api", "spinner.access"}
    assert {line["request_id"] for line in lines} == {"r-503"}
    logging.getLogger("spinner.test").warning("after the request")
    assert log_lines()[-1]["request_id"] is None
