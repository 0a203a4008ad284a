"""`spinner serve` as a user runs it: real redis-server, rq worker and gunicorn processes, HTTP
on loopback, Ctrl-C, and a restart that finds every game again."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.cli import LOCK_WAIT_S, WORKERS
from service.entrypoints.redis_server import RedisServer, free_port
from tests.support.serve import (
    HUMAN,
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    Serve,
    alive,
    call,
    own_redis_env,
    play_until_the_ai_has_answered,
    process_tree,
)
from tests.workers import wait_until


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """Start `spinner serve` processes (healthy: wait for /healthz); any left running are
    killed after."""
    started: list[Serve] = []

    def start(data_dir: Path, environ: dict[str, str], port: int = 0,
              healthy: bool = True, **options: Any) -> Serve:
        log = tmp_path / f"serve{len(started)}.log"
        started.append(Serve(data_dir, log, environ, port or free_port(), **options))
        if healthy:
            started[-1].wait_healthy()
        return started[-1]

    yield start
    for process in started:
        if process.process.poll() is None:
            process.kill()


def test_serve_plays_stops_cleanly_on_ctrl_c_and_a_restart_keeps_the_game(serve, tmp_path):
    data_dir = tmp_path / "var"
    first = serve(data_dir, own_redis_env())
    game_id, token, version = play_until_the_ai_has_answered(first.url)
    children = first.children()
    assert len(children) == 5
    assert sum("redis-server" in c for c in children) == 1
    for flag in WORKERS.values():
        assert sum(c.endswith(f"-m service.entrypoints.cli worker {flag}") for c in children) == 1
    assert sum("-m gunicorn" in c for c in children) == 1
    assert (data_dir / "redis" / "appendonly.aof").stat().st_size > 0

    status, seconds = first.ctrl_c()
    assert status == 0
    assert seconds < STOP_TIMEOUT_S
    assert "Traceback" not in first.log.read_text()

    again = serve(data_dir, own_redis_env())
    status, headers, state = call("GET", f"{again.url}/v1/games/{game_id}", token=token)
    assert status == 200, state
    assert (state["version"], headers["ETag"]) == (version, f'"{version}"')
    assert state["turn"] == HUMAN and state["legal_moves"]
    assert again.ctrl_c()[0] == 0


def test_with_redis_url_serve_uses_that_redis_and_starts_none_of_its_own(
        serve, tmp_path, redis_url, redis_client):
    data_dir = tmp_path / "var"
    running = serve(data_dir, {**own_redis_env(), "REDIS_URL": redis_url})
    children = running.children()
    assert not [c for c in children if "redis-server" in c]
    assert sum("-m gunicorn" in c for c in children) == 1
    assert sum(" -m service.entrypoints.cli worker " in c for c in children) == len(WORKERS)
    assert not (data_dir / "redis").exists()

    status, _, created = call("POST", f"{running.url}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}]})
    assert status == 201, created
    assert redis_client.exists(f"game:{{{created['game_id']}}}:events")
    assert running.ctrl_c()[0] == 0


def test_serve_stops_everything_when_a_child_dies(serve, tmp_path):
    with socket.socket() as squatter:  # gunicorn cannot bind the port, gives up and exits
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        running = serve(tmp_path / "var", own_redis_env(), squatter.getsockname()[1],
                        healthy=False)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while len(running.children()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)  # redis-server, the worker and gunicorn, still trying to bind
        tree = process_tree(running.process.pid)
        assert len(tree) >= 3
        assert running.process.wait(timeout=STOP_TIMEOUT_S) == 1
    assert "the gunicorn exited" in running.log.read_text()
    assert not [command for p, (_, command) in tree.items() if alive(p)]


def test_a_killed_serve_takes_its_children_along_and_no_data_dir_is_served_twice(
        serve, tmp_path):
    """While a serve (or its redis-server) runs, another on its data dir gives up: two
    redis-servers would write one append-only file. kill -9 of serve alone, whose children
    have process groups of their own, still stops them all; then a serve starts on it."""
    first = serve(tmp_path / "var", own_redis_env())
    status, _, created = call("POST", f"{first.url}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}]})
    assert status == 201
    second = serve(tmp_path / "var", own_redis_env(), healthy=False)
    assert second.process.wait(timeout=LOCK_WAIT_S + STOP_TIMEOUT_S) == 1
    assert "is in use by another spinner serve" in second.log.read_text()
    assert "redis-server on" not in second.log.read_text()  # it started nothing
    tree = process_tree(first.process.pid)
    assert len(tree) >= 5  # redis-server, three workers, gunicorn (and its workers)
    first.process.kill()
    assert wait_until(lambda: not [p for p in tree if alive(p)], STOP_TIMEOUT_S)
    third = serve(tmp_path / "var", own_redis_env())
    status, _, state = call("GET", f"{third.url}/v1/games/{created['game_id']}")
    assert (status, state["version"]) == (200, created["version"])
    assert third.ctrl_c()[0] == 0


def child_pid(running: Serve, part: str) -> int | None:
    """The pid of the child of serve whose command line matches the regular expression `part`
    (None: there is none)."""
    return next((pid for (pid, _), (ppid, command) in process_tree(running.process.pid).items()
                 if ppid == running.process.pid and re.search(part, command)), None)


def test_serve_starts_a_killed_worker_or_redis_server_again(serve, tmp_path):
    running = serve(tmp_path / "var", own_redis_env())
    game_id, token, version = play_until_the_ai_has_answered(running.url)
    for name, part in (*((name, f"service.entrypoints.cli worker {flag}$")
                         for name, flag in WORKERS.items()), ("redis-server", "redis-server")):
        victim = child_pid(running, part)
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        assert wait_until(lambda p=part, v=victim: child_pid(running, p) not in (None, v), 30)
        assert f"the {name} exited (-9); starting it again" in running.log.read_text()
        running.wait_healthy()
    status, _, state = call("GET", f"{running.url}/v1/games/{game_id}", token=token)
    assert status == 200 and state["version"] == version  # nothing lost
    play_until_the_ai_has_answered(running.url)  # the worker started again plays
    assert running.ctrl_c()[0] == 0


def test_a_killed_workers_rq_scheduler_does_not_outlive_it(serve, tmp_path):
    """rq's scheduler runs in a child process of the worker that holds its lock: a worker
    killed must not leave it running on unsupervised (serve ends what is left of the dead
    worker's process group before it starts the worker again)."""
    running = serve(tmp_path / "var", own_redis_env())
    workers = {child_pid(running, f"cli worker {flag}$") for flag in WORKERS.values()}

    def scheduler() -> tuple[tuple[int, int], int] | None:
        tree = process_tree(running.process.pid)
        return next(((process, ppid) for process, (ppid, _) in tree.items() if ppid in workers),
                    None)

    assert wait_until(lambda: scheduler() is not None, 30)
    found = scheduler()
    assert found is not None
    process, worker = found
    os.kill(worker, signal.SIGKILL)
    assert wait_until(lambda: not alive(process), 10)
    assert running.ctrl_c()[0] == 0


def test_healthz_answers_503_problem_json_when_redis_is_down():
    closed = f"redis://127.0.0.1:{free_port()}/0"
    client = create_app(services=build(Settings(redis_url=closed))).test_client()
    answer = client.get("/healthz")
    assert answer.status_code == 503
    assert answer.mimetype == "application/problem+json"
    assert answer.json["status"] == 503
    with redis.Redis.from_url(closed, socket_connect_timeout=1) as probe, \
            pytest.raises(redis.ConnectionError):
        probe.ping()  # nothing was listening: the 503 is about Redis, not the app


def raw_answer(base: str, request: bytes, *, then_end: bool = False
               ) -> tuple[int, dict[str, str], Any]:
    """Send raw bytes to the server at `base` (`then_end`: and end the sending half of the
    connection, as a client that went away does); return the status, headers and JSON
    answer."""
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        if then_end:
            sock.shutdown(socket.SHUT_WR)
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        return answer.status, dict(answer.headers), json.loads(answer.read())


def chunked(body: bytes, size: int = 4096) -> bytes:
    """Return `body` in HTTP/1.1 chunked transfer coding."""
    parts = [body[i:i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


SLUGS = {400: "invalid-request", 413: "too-large", 414: "request-uri-too-long",
         431: "request-header-fields-too-large", 501: "not-implemented"}


def test_what_gunicorn_itself_refuses_is_problem_json_too(serve, tmp_path):
    """Requests refused before the app sees them (by gunicorn, its worker class being
    `spinner serve`'s) or while it reads a chunked body answer like any other error; so
    does a body that ends, its connection's sending half closed, short of its Content-Length
    (gunicorn hands the app what came, as if whole)."""
    base = serve(tmp_path / "var", own_redis_env()).url
    token = "tok_" + "x" * 9000
    create = b'{"players": [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]}'
    post = b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    cases = {
        "header too large": (431, b"GET /v1/games/g HTTP/1.1\r\nHost: x\r\nAuthorization: "
                             b"Bearer " + token.encode() + b"\r\n\r\n"),
        "uri too long": (414, b"GET /v1/games/" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
        "bad header": (400, b"GET /v1/games/g HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n"),
        "bad chunk": (400, post + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
        "chunked over the limit": (413, post + b"Transfer-Encoding: chunked\r\n\r\n"
                                   + chunked(create[:-1] + b" " * 200_000 + b"}")),
        "unknown coding": (501, post + b"Transfer-Encoding: br\r\n\r\n"),
        "unknown coding, then chunked": (501, post + b"Transfer-Encoding: br, chunked\r\n\r\n"
                                         + chunked(create)),
        "not ending in chunked": (400, post + b"Transfer-Encoding: gzip\r\n\r\n"),
        "gzip then chunked": (501, post + b"Transfer-Encoding: gzip, chunked\r\n\r\n"
                              + chunked(create)),
    }
    for name, (status, request) in cases.items():
        got, headers, body = raw_answer(base, request)
        assert (name, got, headers["Content-Type"]) == (name, status, "application/problem+json")
        assert body["status"] == status and body["type"] == f"/problems/{SLUGS[status]}", name
        assert status != 400 or body["errors"], name  # a 400 names what is wrong
        assert re.fullmatch(r"[0-9a-f]{32}", headers["X-Request-ID"]), name
        assert token not in json.dumps(body)
    small = post + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(create, 16)
    assert raw_answer(base, small)[0] == 201  # a chunked body within the limit is read whole
    for missing in (1, 30):  # the whole JSON came, but less than its Content-Length said
        cut = post + b"Content-Length: %d\r\n\r\n" % (len(create) + missing) + create
        status, _, body = raw_answer(base, cut, then_end=True)
        assert (status, body["errors"]) == (400, [{"field": "body", "message": "cut short"}])


def test_answers_with_and_without_a_body_follow_each_other_on_one_connection(serve, tmp_path):
    """gunicorn's head waits for the body's first write, to go out with it in one send
    (`HeadWithBody`); an answer with no body (a 304, a HEAD's) still gets its head, and the
    next answer on the keep-alive connection comes after it, whole."""
    base = serve(tmp_path / "var", own_redis_env()).url
    connection = http.client.HTTPConnection("127.0.0.1", int(base.rsplit(":", 1)[1]),
                                            timeout=10)
    body = json.dumps({"players": [{"name": "A", "kind": "human"},
                                   {"name": "B", "kind": "human"}]})
    connection.request("POST", "/v1/games", body, {"Content-Type": "application/json"})
    created = connection.getresponse()
    game = json.loads(created.read())
    path = f"/v1/games/{game['game_id']}"
    answers = []
    for method, headers in (("GET", {}), ("GET", {"If-None-Match": f'"{game["version"]}"'}),
                            ("HEAD", {}), ("GET", {})):
        connection.request(method, path, headers=headers)
        answer = connection.getresponse()
        answers.append((answer.status, answer.getheader("ETag"), answer.read()))
    connection.close()
    etag = f'"{game["version"]}"'
    assert created.status == 201
    assert [(status, tag) for status, tag, _ in answers] == [
        (200, etag), (304, etag), (200, etag), (200, etag)]
    assert answers[1][2] == answers[2][2] == b""
    assert json.loads(answers[0][2]) == json.loads(answers[3][2])
    assert json.loads(answers[3][2])["version"] == game["version"]


STREAMS = 500
"""Streams the test below keeps open: more than a thread-per-request server would have, and
more than a process could hold with redis-py's default pool of 100 connections."""


def open_stream(base: str, game_id: str, streams: list[socket.socket]) -> None:
    """Open `/stream` as a spectator, add it to `streams`, and wait for its first frame."""
    port = int(base.rsplit(":", 1)[1])
    streams.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    request = f"GET /v1/games/{game_id}/stream HTTP/1.1\r\nHost: x\r\n\r\n"
    streams[-1].sendall(request.encode())
    assert b"200 OK" in read_until(streams[-1], b"retry: 2000")


def read_until(sock: socket.socket, wanted: bytes) -> bytes:
    """Read from `sock` until `wanted` has come (or the socket's timeout)."""
    got = b""
    while wanted not in got:
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    return got


def test_many_open_streams_leave_the_service_answering(serve, tmp_path):
    """A stream (SSE) stays open until the match ends; five hundred of them must not hold up
    other requests, and each gets the next event (API.md: GET /stream)."""
    base = serve(tmp_path / "var", own_redis_env()).url
    status, _, created = call("POST", f"{base}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}], "seed": 3})
    assert status == 201, created
    game_id = created["game_id"]
    streams: list[socket.socket] = []
    try:
        for _ in range(STREAMS):
            open_stream(base, game_id, streams)
        assert call("GET", f"{base}/healthz")[0] == 200
        _, _, state = call("GET", f"{base}/v1/games/{game_id}")
        seat = state["turn"]
        token = created["seats"][seat]["token"]
        _, _, own = call("GET", f"{base}/v1/games/{game_id}", token=token)
        status, _, moved = call("POST", f"{base}/v1/games/{game_id}/moves",
                                own["legal_moves"][0], token)
        assert status == 200, moved
        wanted = f"id: {moved['version']}\n".encode()
        assert all(wanted in read_until(sock, wanted) for sock in streams)
    finally:
        for sock in streams:
            sock.close()


def test_a_stream_whose_client_has_gone_frees_its_place_at_once(serve, tmp_path):
    """A stream waits on Redis until the next event or keep-alive (60 s here), and only a
    write would find its client gone: the server watches the connection instead, so a
    client that reconnects at once does not meet its own closed stream in the cap."""
    environ = {**own_redis_env(), "STREAMS_PER_CLIENT": "1", "STREAM_KEEPALIVE_S": "60"}
    base = serve(tmp_path / "var", environ, args=("--api-workers", "1")).url
    status, _, created = call("POST", f"{base}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}], "seed": 3})
    assert status == 201, created
    streams: list[socket.socket] = []
    open_stream(base, created["game_id"], streams)
    path = f"/v1/games/{created['game_id']}/stream"
    assert call("GET", f"{base}{path}")[0] == 429  # the one place is taken
    streams.pop().close()
    assert wait_until(lambda: stream_status(base, path) == 200, 5)


def stream_status(base: str, path: str) -> int:
    """The status of a stream opened as a spectator (closed again at once)."""
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=10)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


def slow_to_load(redis_dir: Path, commands: int = 150_000) -> None:
    """Leave in `redis_dir` an append-only file that takes a second or more to load: scripts
    whose every command (a union of a hundred members) is replayed one by one. Each script is
    short (a long one, on a loaded machine, outlasts Redis' script time limit: BUSY)."""
    with RedisServer(redis_dir) as server, redis.Redis(port=server.port) as client:
        client.sadd("big", *range(100))
        for _ in range(0, commands, 10_000):
            client.eval("for _ = 1, tonumber(ARGV[1]) do redis.call('SUNIONSTORE', 'copy',"
                        " 'big') end", 0, 10_000)


def restarted_and_loading(running: Serve, killed: int) -> int:
    """Wait for the redis-server serve starts after `killed` to be loading its data; return
    its pid."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        pid = child_pid(running, "redis-server")
        found = re.search(r"redis-server on (redis://\S+)", running.log.read_text())
        if pid not in (None, killed) and found is not None:
            try:
                with redis.Redis.from_url(found[1], socket_timeout=1) as probe:
                    if probe.info("persistence")["loading"]:
                        return pid
            except redis.ConnectionError:
                pass  # not listening yet
        time.sleep(0.02)
    pytest.fail(f"no redis-server loading after {killed} was killed:\n{running.log.read_text()}")


def test_serve_survives_redis_server_killed_while_loading_again_and_again(serve, tmp_path):
    """A redis-server killed while it still loads its append-only file is started again, as
    often as it is killed, and the service then works with every game it had."""
    data_dir = tmp_path / "var"
    slow_to_load(data_dir / "redis")
    running = serve(data_dir, own_redis_env())
    status, _, created = call("POST", f"{running.url}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}]})
    assert status == 201, created
    victim = child_pid(running, "redis-server")
    assert victim is not None
    for _ in range(3):  # the loaded one, then twice one that is loading
        os.kill(victim, signal.SIGKILL)
        victim = restarted_and_loading(running, victim)
    assert running.process.poll() is None
    running.wait_healthy()
    status, _, state = call("GET", f"{running.url}/v1/games/{created['game_id']}")
    assert status == 200 and state["version"] == created["version"], state
    assert running.log.read_text().count("the redis-server exited (-9); starting it again") == 3
    play_until_the_ai_has_answered(running.url)  # the worker plays on
    assert running.ctrl_c()[0] == 0
