"""All Fives AI seats on a real rq worker (issue 22 point 3): the worker plays a game's seats
with the AI of its variant (workers/jobs.py), to the end of a match that verifies."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from tests.api.driver import create
from tests.workers import WorkerProcess, wait_until


@pytest.fixture
def worker(redis_url: str, redis_client) -> Iterator[WorkerProcess]:
    """One real worker, quick to move."""
    process = WorkerProcess(redis_url, ai_budget_s="0.05", ai_min_delay_s="0.0")
    yield process
    process.stop()


def test_a_match_of_all_fives_ai_seats_runs_to_its_target_and_verifies(
        worker, redis_url, tmp_path):
    services = build(Settings(redis_url=redis_url, seeded_games=True))
    client = create_app({"TESTING": True}, services=services).test_client()
    game_id, _ = create(client, seats=3, seed=4, ai={0: "greedy", 1: "random", 2: "expert"},
                        rules={"variant": "all_fives", "target": 50})
    assert wait_until(
        lambda: client.get(f"/v1/games/{game_id}").json["status"] == "finished", 120)
    export = client.get(f"/v1/games/{game_id}/export").json
    assert any(e["type"] == "leader_drawn" for e in export["events"])
    assert {e["seat"] for e in export["events"] if e["type"] == "tile_played"} == {0, 1, 2}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 0
