"""No AI turn is lost: a job left by a worker or rq's scheduler that died is queued again, by
the game's next read and by the worker's sweep. Each fault is injected at its exact point:
a job taken into rq's intermediate list by no one alive, held by a dead worker, or overdue in
the retry (scheduled) registry with no scheduler."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler

from service.adapters.bootstrap import Services, build
from service.adapters.lost_turns import JobLocator, JobSighting
from service.adapters.settings import Settings
from service.adapters.turn_queue import EXPERT_QUEUE_NAME, QUEUE_NAME, job_id, turn_of
from service.adapters.webhooks import QUEUE_NAME as NOTIFICATIONS
from service.api.app import create_app
from tests.api.driver import auth, create
from tests.integration.test_faults import children
from tests.workers import WorkerProcess, wait_until

STUCK_S = 0.5  # ai_stuck_after_s in these tests


@pytest.fixture
def services(redis_url: str, redis_client: redis.Redis) -> Services:
    """The real services over the test Redis (flushed), a turn presumed lost after 0.5 s."""
    return build(Settings(redis_url=redis_url, ai_budget_s=0.05, ai_stuck_after_s=STUCK_S))


@pytest.fixture
def patient(redis_url: str, redis_client: redis.Redis) -> Services:
    """The real services, a turn presumed lost after the default 10 s."""
    return build(Settings(redis_url=redis_url))


@pytest.fixture
def queue(redis_client: redis.Redis) -> Queue:
    """The AI turn queue, as rq sees it."""
    return Queue(QUEUE_NAME, connection=redis_client)


@pytest.fixture
def dead_worker(queue: Queue) -> Iterator[SimpleWorker]:
    """An rq worker registered in Redis but never run here: it dies when the test says."""
    worker = SimpleWorker([queue], connection=queue.connection)
    worker.register_birth()
    yield worker
    worker.connection.delete(worker.key)


def ai_to_move(services: Services, seed: int = 24) -> tuple[str, int]:
    """Create a game of two AI seats (its first turn queued, no worker running); return its
    id and the version the turn is due at."""
    client = create_app({"TESTING": True}, services=services).test_client()
    game_id, _ = create(client, seats=2, hands=1, seed=seed, ai={0: "greedy", 1: "greedy"})
    return game_id, services.store.version(game_id)


def read(services: Services, game_id: str) -> None:
    """GET the game, as any client would (the read checks its AI turn)."""
    client = create_app({"TESTING": True}, services=services).test_client()
    assert client.get(f"/v1/games/{game_id}").status_code == 200


def take(queue: Queue, game_id: str, version: int) -> None:
    """Move the turn's job into rq's intermediate list, as a worker does before it marks the
    job started (rq's LMOVE): a worker killed right then leaves it there."""
    assert queue.connection.lmove(queue.key, queue.intermediate_queue_key) \
        == job_id(game_id, version).encode()


def pop(queue: Queue, game_id: str, version: int) -> None:
    """Take the turn's job out of the queue as a worker of several queues does before it
    marks the job started (rq's BLPOP, into no list): a worker killed right then leaves it
    out of every list, still marked queued."""
    assert queue.connection.lpop(queue.key) == job_id(game_id, version).encode()
    assert Job.fetch(job_id(game_id, version), connection=queue.connection).get_status() \
        == JobStatus.QUEUED


def start_on(worker: SimpleWorker, queue: Queue, game_id: str, version: int) -> Job:
    """Let `worker` take the turn's job and mark it started, as rq does, but not run it."""
    found = Queue.dequeue_any([queue], None, connection=queue.connection)
    assert found is not None and found[0].id == job_id(game_id, version)
    worker.prepare_execution(found[0])
    worker.prepare_job_execution(found[0], remove_from_intermediate_queue=True)
    assert found[0].get_status() == JobStatus.STARTED
    return found[0]


def leave_for_retry(queue: Queue, game_id: str, version: int, due: datetime) -> None:
    """Put the turn's job in rq's retry (scheduled) registry, due at `due`."""
    job = Job.fetch(job_id(game_id, version), connection=queue.connection)
    queue.remove(job)
    queue.schedule_job(job, due)
    assert job.get_status() == JobStatus.SCHEDULED and job.id not in queue.job_ids


def queued_again(queue: Queue, game_id: str, version: int) -> bool:
    """Whether the turn's job waits in the queue, and only there, marked queued."""
    job = Job.fetch(job_id(game_id, version), connection=queue.connection)
    return (queue.job_ids == [job.id] and job.get_status() == JobStatus.QUEUED
            and not queue.connection.lrange(queue.intermediate_queue_key, 0, -1)
            and job.id not in queue.scheduled_job_registry)


def test_job_ids_name_their_turn() -> None:
    assert turn_of(job_id("9f0a1b2c3d4e5f60", 12)) == ("9f0a1b2c3d4e5f60", 12)
    assert turn_of("ai-turn-g-x") is None and turn_of("other-g-3") is None


def test_a_turn_taken_by_a_worker_that_died_before_starting_it_is_healed_by_a_read(
        services, queue):
    game_id, version = ai_to_move(services)
    take(queue, game_id, version)
    read(services, game_id)
    assert queue.job_ids == []  # just taken: its worker may be starting it
    time.sleep(STUCK_S + 0.1)
    read(services, game_id)
    assert queued_again(queue, game_id, version)


def test_a_turn_popped_by_a_worker_of_several_queues_is_left_to_it_then_healed(
        services, queue):
    """A worker of both lanes takes a job out of its queue into no list, then marks it
    started: a read meanwhile must leave it (or the turn would be played twice), and heal
    it only once its worker has had the time to start it."""
    game_id, version = ai_to_move(services)
    pop(queue, game_id, version)
    read(services, game_id)
    job = Job.fetch(job_id(game_id, version), connection=queue.connection)
    assert queue.job_ids == [] and job.get_status() == JobStatus.QUEUED  # its worker's
    time.sleep(STUCK_S + 0.1)
    read(services, game_id)
    assert queued_again(queue, game_id, version)


def test_the_sweep_heals_a_turn_a_worker_of_several_queues_popped_and_died_with(
        services, queue):
    """Such a job is in none of rq's lists or registries: the mark its enqueue left leads the
    workers' sweep to it (a game of AI seats nobody reads would wait for good), once its
    worker has had the time to start it."""
    game_id, version = ai_to_move(services)
    pop(queue, game_id, version)
    assert services.queue.sweep() == 0  # just taken: its worker may be starting it
    time.sleep(STUCK_S + 0.1)
    assert services.queue.sweep() == 0  # first seen taken now
    time.sleep(STUCK_S + 0.1)
    assert services.queue.sweep() == 1
    assert queued_again(queue, game_id, version)


def test_a_read_that_found_no_job_leaves_the_one_queued_meanwhile_to_its_worker(
        services, queue, monkeypatch):
    """A read between an append and its AI turn's enqueue finds no job; by the time it heals
    the turn, the appending process may have queued it and a worker taken it: the read must
    neither delete that job nor queue another (readers polling a game had turns played
    twice)."""
    game_id, version = ai_to_move(services)  # the creation queued the turn
    pop(queue, game_id, version)  # and a worker took it
    seen_before = JobSighting(status=None, enqueued_at=None, started_at=None, queued=False,
                              taken_seen_at=None, due_at=None, scheduler_alive=True,
                              worker_alive=False)
    monkeypatch.setattr(JobLocator, "sight", lambda *_: seen_before)
    read(services, game_id)
    job = Job.fetch(job_id(game_id, version), connection=queue.connection)
    assert queue.job_ids == [] and job.get_status() == JobStatus.QUEUED  # its worker's


def test_a_turn_held_by_a_worker_no_longer_alive_is_healed_at_once(patient, queue,
                                                                   dead_worker):
    game_id, version = ai_to_move(patient)
    start_on(dead_worker, queue, game_id, version)
    read(patient, game_id)
    assert queue.job_ids == []  # its worker lives: it is playing the turn
    dead_worker.register_death()
    read(patient, game_id)
    assert queued_again(queue, game_id, version)
    assert not queue.started_job_registry.get_job_ids()  # rq will not fail the new one later


def test_a_retry_overdue_with_no_scheduler_is_healed_by_a_read(patient, queue):
    game_id, version = ai_to_move(patient)
    lock = RQScheduler.get_locking_key(QUEUE_NAME)
    queue.connection.set(lock, "a-live-scheduler", ex=60)
    leave_for_retry(queue, game_id, version, datetime.now(UTC) - timedelta(seconds=1))
    read(patient, game_id)
    assert queue.count == 0  # overdue, but a scheduler lives: it moves the job
    queue.connection.delete(lock)
    read(patient, game_id)
    assert queued_again(queue, game_id, version)


def test_a_retry_overdue_past_the_stuck_time_is_healed_even_with_a_scheduler_lock(
        services, queue):
    game_id, version = ai_to_move(services)
    queue.connection.set(RQScheduler.get_locking_key(QUEUE_NAME), "a-stuck-scheduler", ex=60)
    leave_for_retry(queue, game_id, version, datetime.now(UTC) + timedelta(seconds=1))
    read(services, game_id)
    assert queue.count == 0  # not due yet
    time.sleep(2 + STUCK_S)  # the registry keeps whole seconds
    read(services, game_id)
    assert queued_again(queue, game_id, version)


def test_the_sweep_queues_again_the_lost_turns_rq_holds_and_only_those(services, queue,
                                                                       dead_worker):
    taken, started, overdue, fresh = (ai_to_move(services, seed) for seed in (24, 25, 26, 27))
    take(queue, *taken)
    start_on(dead_worker, queue, *started)
    dead_worker.register_death()
    leave_for_retry(queue, *overdue, datetime.now(UTC) - timedelta(seconds=1))
    time.sleep(STUCK_S + 0.1)
    assert services.queue.sweep() == 2  # the dead worker's and the overdue one
    assert set(queue.job_ids) == {job_id(*fresh), job_id(*started), job_id(*overdue)}
    time.sleep(STUCK_S + 0.1)  # the taken one seen taken again, this long after: lost
    take(queue, *fresh)  # long queued, just taken by a live worker: not lost
    assert services.queue.sweep() == 1
    assert set(queue.job_ids) == {job_id(*turn) for turn in (taken, started, overdue)}
    assert queue.connection.lrange(queue.intermediate_queue_key, 0, -1) == [
        job_id(*fresh).encode()]
    assert services.queue.sweep() == 0  # each once


def test_a_game_nobody_reads_moves_on_after_its_ai_turn_is_stranded(services, queue,
                                                                    redis_url):
    """End to end: a human-vs-AI game whose AI job a worker took and never started (killed
    between its LMOVE and marking the job started) moves on by itself: the worker's sweep
    queues the turn again, though no client reads the game."""
    client = create_app({"TESTING": True}, services=services).test_client()
    game_id, tokens = create(client, seats=2, hands=1, seed=5, ai={1: "random"})
    state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
    if state["turn"] == 0:
        moved = client.post(f"/v1/games/{game_id}/moves", json=state["legal_moves"][0],
                            headers=auth(tokens[0]))
        assert moved.status_code == 200 and moved.json["turn"] == 1
    version = services.store.version(game_id)
    take(queue, game_id, version)
    worker = WorkerProcess(redis_url, ai_budget_s="0.05", ai_stuck_after_s="1",
                           ai_sweep_every_s="1")
    try:
        assert wait_until(lambda: services.store.version(game_id) > version, 20)
    finally:
        worker.stop()


def test_rqs_scheduler_killed_under_spinner_worker_is_started_again(services, queue,
                                                                     redis_url):
    """rq's scheduler runs in a child process of the worker and dies on a Redis error; a
    turn due for retry waits on it. Killed, it is started again, and the retry runs (the
    sweep would rescue the turn too, but only after the stuck time, here a minute)."""
    game_id, version = ai_to_move(services)
    queue.empty()
    worker = WorkerProcess(redis_url, ai_budget_s="0.05", ai_stuck_after_s="60",
                           ai_sweep_every_s="1")
    try:
        assert wait_until(lambda: len(children(worker.pid)) == 1, 20)
        scheduler = children(worker.pid)[0]
        os.kill(scheduler, signal.SIGKILL)
        assert wait_until(lambda: children(worker.pid) not in ([], [scheduler]), 10)
        queue.connection.delete(job_id(game_id, version))
        queue.enqueue_in(timedelta(seconds=1), "workers.jobs.take_ai_turn", game_id, version,
                         job_id=job_id(game_id, version))
        assert wait_until(lambda: services.store.version(game_id) > version, 20)
    finally:
        worker.stop()


def test_a_scheduler_lock_left_by_a_scheduler_that_died_with_redis_is_freed(services, queue,
                                                                         redis_url):
    """Redis restarted from its append-only file brings back the lock of a scheduler that
    died with it, with a minute to live: a worker frees it, its holder no longer
    heartbeating, and starts its own scheduler, so that retries and turn clocks wait
    seconds, not a minute."""
    connection = queue.connection
    names = [QUEUE_NAME, EXPERT_QUEUE_NAME, NOTIFICATIONS]  # every queue a worker serves
    silent = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    connection.hset(SCHEDULER_KEY_TEMPLATE % "dead", mapping={"last_heartbeat": silent})
    for name in names:
        connection.set(RQScheduler.get_locking_key(name), "dead", ex=61)
    worker = WorkerProcess(redis_url, ai_budget_s="0.05", ai_sweep_every_s="1")
    try:
        assert wait_until(lambda: len(children(worker.pid)) == 1, 15)  # its scheduler
        holders = {connection.get(RQScheduler.get_locking_key(name)) for name in names}
        assert b"dead" not in holders and None not in holders
    finally:
        worker.stop()
