"""Slow clients cannot hold the service (issue 17): thousands of connections that send half a
request and stop are closed by the server once the read deadline passes, and meanwhile other
clients' moves are still answered."""

from __future__ import annotations

import json
import resource
import selectors
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.entrypoints.redis_server import free_port
from tests.support.serve import Serve, call, own_redis_env

BODY_READ_TIMEOUT_S = 2
SLOW_BODIES = 2000
SLOW_HEADERS = 200
IDLE = 100
CLOSE_TIMEOUT_S = BODY_READ_TIMEOUT_S + 15.0  # generous: the server closes them at about 2 s
HALF_A_BODY = (b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b'Content-Length: 60000\r\n\r\n{"players":')
"""The issue's request: a Content-Length of 60000, and 11 bytes of the body sent."""
HALF_THE_HEADERS = b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: appl"
"""A request whose headers stop halfway (slowloris)."""
WHOLE_REQUEST = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
"""A whole request, after which its connection stays idle (kept alive)."""


@pytest.fixture
def sockets_enough() -> Iterator[None]:
    """Raise this process' soft limit of open files (its children inherit it) to hold the
    slow clients' sockets, as far as the hard limit lets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * (SLOW_BODIES + SLOW_HEADERS + IDLE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard limit of open files ({hard}) is under {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def slow_serve(tmp_path: Path, sockets_enough: None) -> Iterator[Serve]:
    """`spinner serve` with a short body read deadline. The per-address rate limit is off:
    every client here comes from 127.0.0.1, and the slow ones must reach the body read."""
    environ = {**own_redis_env(), "BODY_READ_TIMEOUT_S": str(BODY_READ_TIMEOUT_S),
               "RATE_LIMIT_PER_ADDRESS": "0"}
    running = Serve(tmp_path / "var", tmp_path / "serve.log", environ, free_port())
    try:
        running.wait_healthy()
        yield running
    finally:
        running.kill()


def half_sent(port: int, request: bytes) -> socket.socket:
    """Open a connection and send `request` (which stops short of its end, or leaves the
    connection idle)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(request)
    sock.setblocking(False)
    return sock


def read_to_the_end(slow: list[socket.socket], timeout: float) -> dict[socket.socket, bytes]:
    """Read every socket in `slow` until the server closes it, or `timeout` passes; return
    what each that was closed received (those still open are left out)."""
    got = {sock: b"" for sock in slow}
    ended: dict[socket.socket, bytes] = {}
    with selectors.DefaultSelector() as selector:
        for sock in slow:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while len(ended) < len(slow) and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.5):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    chunk = b""  # dropped: as good as closed
                got[sock] += chunk
                if not chunk:
                    selector.unregister(sock)
                    ended[sock] = got[sock]
    return ended


def play_moves(base: str, moves: int) -> None:
    """Create a two-human game and play `moves` of its legal moves, each answered 200."""
    status, _, created = call("POST", f"{base}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}], "seed": 5})
    assert status == 201, created
    game_id = created["game_id"]
    for _ in range(moves):
        _, _, public = call("GET", f"{base}/v1/games/{game_id}")
        token = created["seats"][public["turn"]]["token"]
        _, _, own = call("GET", f"{base}/v1/games/{game_id}", token=token)
        status, _, moved = call("POST", f"{base}/v1/games/{game_id}/moves",
                                own["legal_moves"][0], token)
        assert status == 200, moved


def test_half_sent_requests_are_closed_at_the_deadline_while_others_play(slow_serve):
    """2,000 bodies stopped after 11 of their 60,000 bytes, and 200 requests stopped within
    their headers, and 100 idle after a whole request, are held open from one address: another
    client still creates a game and plays its moves, /healthz answers, and each slow
    connection is closed by the server once the deadlines pass: a half-sent body with a 408
    problem, half-sent headers dropped, an idle one after its answer (keep-alive, 2 s)."""
    port = int(slow_serve.url.rsplit(":", 1)[1])
    bodies = [half_sent(port, HALF_A_BODY) for _ in range(SLOW_BODIES)]
    headers = [half_sent(port, HALF_THE_HEADERS) for _ in range(SLOW_HEADERS)]
    idle = [half_sent(port, WHOLE_REQUEST) for _ in range(IDLE)]
    try:
        play_moves(slow_serve.url, 4)
        assert call("GET", f"{slow_serve.url}/healthz")[0] == 200

        ended = read_to_the_end(bodies + headers + idle, CLOSE_TIMEOUT_S)
        assert sum(sock in ended for sock in bodies) == SLOW_BODIES  # none still open
        assert sum(sock in ended for sock in headers) == SLOW_HEADERS
        assert sum(sock in ended for sock in idle) == IDLE
        assert {ended[sock] for sock in headers} == {b""}  # dropped, no answer
        assert all(ended[sock].startswith(b"HTTP/1.1 408 ") for sock in bodies)
        assert all(ended[sock].startswith(b"HTTP/1.1 200 ") for sock in idle)
        head, _, body = ended[bodies[0]].partition(b"\r\n\r\n")
        assert b"\r\nConnection: close\r\n" in head
        assert b"\r\nContent-Type: application/problem+json\r\n" in head
        problem = json.loads(body)
        assert (problem["status"], problem["type"]) == (408, "/problems/request-timeout")
    finally:
        for sock in bodies + headers + idle:
            sock.close()
    assert "Traceback" not in slow_serve.log.read_text()
