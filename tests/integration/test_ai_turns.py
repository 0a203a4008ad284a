"""AI turns on real rq workers over a real Redis: they play, never twice, and heal when lost."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from rq import Queue
from rq.job import Job, JobStatus

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.adapters.turn_queue import EXPERT_QUEUE_NAME, QUEUE_NAME, job_id
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from service.rules.turns import legal_moves
from service.usecases.loading import load
from tests.api.driver import auth, create
from tests.workers import WorkerProcess, wait_until


@pytest.fixture
def worker(redis_url: str, redis_client) -> Iterator[WorkerProcess]:
    """One real worker with a short AI budget."""
    process = WorkerProcess(redis_url, ai_budget_s="0.05")
    yield process
    process.stop()


@pytest.fixture
def client(redis_url: str, redis_client):
    """A plain test client of the real app (AI budget as the worker's)."""
    services = build(Settings(redis_url=redis_url, ai_budget_s=0.05))
    return create_app({"TESTING": True}, services=services).test_client()


def test_a_match_of_ai_seats_runs_to_the_end_by_itself_and_verifies(worker, client, tmp_path,
                                                                   redis_client):
    game_id, _ = create(client, seats=3, hands=2, seed=21,
                        ai={0: "greedy", 1: "random", 2: "expert"})
    finished = wait_until(
        lambda: client.get(f"/v1/games/{game_id}").json["status"] == "finished", 120)
    assert finished
    export = client.get(f"/v1/games/{game_id}/export").json
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 0
    assert len(client.get(f"/v1/games/{game_id}").json["scores"]) == 2
    queues = (Queue(name, connection=redis_client) for name in (QUEUE_NAME, EXPERT_QUEUE_NAME))
    assert all(redis_client.zcard(f"{queue.key}:pending") == 0 for queue in queues)  # all run


def test_the_ai_answers_a_human_move(worker, client):
    game_id, tokens = create(client, seats=2, hands=1, seed=22, ai={1: "greedy"})
    state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
    for _ in range(5):  # a few human moves, each answered by the AI seat
        assert wait_until(lambda: client.get(f"/v1/games/{game_id}").json["turn"] == 0, 20)
        state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
        if state["status"] != "playing":
            break
        moved = client.post(f"/v1/games/{game_id}/moves", json=state["legal_moves"][0],
                            headers=auth(tokens[0]))
        assert moved.status_code == 200
    log = client.get(f"/v1/games/{game_id}/events").json["events"]
    assert any(e["seat"] == 1 and e["type"] in ("tile_played", "tile_drawn", "passed")
               for e in log)


def test_one_job_per_ai_turn_and_a_stale_job_does_nothing(client, redis_url, redis_client):
    services = build(Settings(redis_url=redis_url))
    game_id, _ = create(client, seats=2, hands=1, seed=23, ai={0: "greedy", 1: "greedy"})
    version = client.get(f"/v1/games/{game_id}").json["version"]
    queue = Queue(QUEUE_NAME, connection=redis_client)
    services.queue.enqueue_turn(game_id, version)
    services.queue.enqueue_turn(game_id, version)
    assert queue.job_ids == [job_id(game_id, version)]
    assert services.games.ai_turn(game_id, version - 1, lambda *_: pytest.fail("stale")) is False
    assert client.get(f"/v1/games/{game_id}").json["version"] == version


def test_a_flushed_ai_turn_is_healed_by_the_next_read(client, redis_url, redis_client):
    game_id, _ = create(client, seats=2, hands=1, seed=24, ai={0: "greedy", 1: "greedy"})
    version = client.get(f"/v1/games/{game_id}").json["version"]
    queue = Queue(QUEUE_NAME, connection=redis_client)
    queue.empty()
    assert queue.count == 0
    client.get(f"/v1/games/{game_id}")  # the read notices the lost turn
    assert queue.job_ids == [job_id(game_id, version)]
    worker = WorkerProcess(redis_url, ai_budget_s="0.05")
    try:
        assert wait_until(
            lambda: client.get(f"/v1/games/{game_id}").json["version"] > version, 20)
    finally:
        worker.stop()


def _drop_other_turns(connection, kept: str) -> None:
    """Empty the expert lane but for the job `kept`: the games tried before it may have
    queued searches of their own, which a worker would take (for long) first."""
    queue = Queue(EXPERT_QUEUE_NAME, connection=connection)
    for other in set(queue.job_ids) - {kept}:
        queue.remove(other)
    assert queue.job_ids == [kept]


def _game_where_the_ai_must_think(client, games) -> tuple[str, int]:
    """Create games until the AI seat (1) faces a real choice; return it and its version."""
    for seed in range(100):
        game_id, tokens = create(client, seats=2, hands=1, seed=seed, ai={1: "expert"})
        state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
        if state["turn"] == 0:
            client.post(f"/v1/games/{game_id}/moves", json=state["legal_moves"][0],
                        headers=auth(tokens[0]))
        game = load(games.ctx, game_id)
        if game.turn == 1 and len(legal_moves(game.hand, 1)) > 1:
            return game_id, game.version
    raise AssertionError("no seed gives the AI a choice")


def test_an_ai_turn_survives_a_worker_killed_mid_turn(redis_url, redis_client):
    settings = Settings(redis_url=redis_url, ai_budget_s=30.0, ai_stuck_after_s=3.0,
                        ai_games_per_client=100,  # it may create many games to find one,
                        ai_turns_per_client=100)  # whose turns must not defer its own
    services = build(settings)
    client = create_app({"TESTING": True}, services=services).test_client()
    game_id, version = _game_where_the_ai_must_think(client, services.games)
    _drop_other_turns(redis_client, job_id(game_id, version))
    thinker = WorkerProcess(redis_url, ai_budget_s="30")  # mid-search when it is killed
    try:
        job = Job.fetch(job_id(game_id, version), connection=redis_client)
        # generous: a worker's start (imports, rq's scheduler) is slow on a loaded CI machine
        assert wait_until(lambda: job.get_status() == JobStatus.STARTED, 60)
    finally:
        thinker.kill()
    rescuer = WorkerProcess(redis_url, ai_budget_s="0.05")
    try:
        started = time.monotonic()
        assert wait_until(
            lambda: client.get(f"/v1/games/{game_id}").json["version"] > version, 30)
        assert time.monotonic() - started < 30
    finally:
        rescuer.stop()


def test_a_read_while_the_ai_turn_job_vanishes_still_answers(client, redis_url, redis_client):
    """A job finished and deleted between its fetch and its status read (rq then raises
    InvalidJobOperation) must not fail the read that checked it: the turn is queued again."""
    game_id, _ = create(client, seats=2, hands=1, seed=24, ai={0: "greedy", 1: "greedy"})
    version = client.get(f"/v1/games/{game_id}").json["version"]
    redis_client.hdel(Job.key_for(job_id(game_id, version)), "status")  # as if mid-deletion
    answer = client.get(f"/v1/games/{game_id}")
    assert answer.status_code == 200 and answer.json["version"] == version
    assert Queue(QUEUE_NAME, connection=redis_client).job_ids == [job_id(game_id, version)]


def test_a_turn_lost_while_a_stream_waits_is_healed_by_the_stream(redis_url, redis_client):
    """A client that follows the game on /stream alone (no GET) still sees the AI move on:
    while no event comes, the stream itself re-queues a turn whose job was lost."""
    services = build(Settings(redis_url=redis_url, ai_budget_s=0.05, stream_keepalive_s=0.3))
    app = create_app({"TESTING": True}, services=services)
    game_id, _ = create(app.test_client(), seats=2, hands=1, seed=24,
                        ai={0: "greedy", 1: "greedy"})
    version = services.store.version(game_id)
    ids: list[int] = []
    with app.test_client() as raw:
        answer = raw.get(f"/v1/games/{game_id}/stream?after={version}", buffered=False)
        frames = iter(answer.response)
        assert next(frames).startswith(b"retry:")  # open, its turn's job still queued
        Queue(QUEUE_NAME, connection=redis_client).empty()  # then the job is lost
        worker = WorkerProcess(redis_url, ai_budget_s="0.05")
        try:
            deadline = time.monotonic() + 30
            for chunk in frames:
                ids += [int(line[4:]) for line in chunk.decode().splitlines()
                        if line.startswith("id: ")]
                if ids or time.monotonic() > deadline:
                    break
        finally:
            answer.close()
            worker.stop()
    assert ids and ids[0] == version + 1


def test_a_turn_a_worker_has_just_taken_is_not_queued_again(client, redis_client):
    """rq moves a job it takes to an intermediate queue before it marks the job started: a
    read in between must not take the job for lost (under load, one turn in eight ran twice)."""
    game_id, _ = create(client, seats=2, hands=1, seed=24, ai={0: "greedy", 1: "greedy"})
    version = client.get(f"/v1/games/{game_id}").json["version"]
    queue = Queue(QUEUE_NAME, connection=redis_client)
    taken = job_id(game_id, version).encode()
    assert redis_client.lmove(queue.key, queue.intermediate_queue_key) == taken  # as a worker
    assert client.get(f"/v1/games/{game_id}").status_code == 200  # the read checks the turn
    assert queue.job_ids == []  # not queued again
    assert redis_client.lrange(queue.intermediate_queue_key, 0, -1) == [taken]
    assert Job.fetch(taken.decode(), connection=redis_client).get_status() == JobStatus.QUEUED
