"""A notification's HTTP connection (service/adapters/webhook_channel.py) against a raw TCP
server on loopback that answers each request with the bytes it is told: one send a POST, a
connection kept only while the answer allows it, interim answers skipped, anything that is
not HTTP/1.x no answer."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from service.adapters.webhook_channel import Channel, post_alone
from service.adapters.webhook_targets import Target

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


class RawServer:
    """Answers the n-th request it reads (a head and a body of its Content-Length) with
    `answers[n]` (empty: it closes the connection instead); counts the connections and
    keeps each request's bytes."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers, self.requests, self.connections = list(answers), [], 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._serve, daemon=True).start()

    def target(self) -> Target:
        """The server as a checked target."""
        port = self.listener.getsockname()[1]
        return Target("http", "127.0.0.1", port, "/hooks?x=1", "127.0.0.1")

    def _serve(self) -> None:
        """Accept connections while answers remain."""
        while self.answers:
            try:
                sock, _ = self.listener.accept()
            except OSError:  # the test ended and closed it
                return
            self.connections += 1
            threading.Thread(target=self._talk, args=(sock,), daemon=True).start()

    def _talk(self, sock: socket.socket) -> None:
        """Serve one connection."""
        with sock, contextlib.suppress(OSError):  # the client may reset it as it closes
            self._answer_each(sock)

    def _answer_each(self, sock: socket.socket) -> None:
        """Read each request on `sock` and answer it, until the answers run out."""
        data = b""
        while self.answers:
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, data = data.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            while len(data) < length:
                data += sock.recv(65536)
            self.requests.append(head + b"\r\n\r\n" + data[:length])
            data = data[length:]
            answer = self.answers.pop(0)
            if not answer:  # close without answering
                return
            sock.sendall(answer)


@pytest.fixture
def serve() -> Iterator[Callable[[list[bytes]], tuple[RawServer, Channel]]]:
    """Make a raw server and a channel to it; close both after the test."""
    made: list[tuple[RawServer, Channel]] = []

    def make(answers: list[bytes]) -> tuple[RawServer, Channel]:
        server = RawServer(answers)
        made.append((server, Channel(server.target(), 2.0)))
        return made[-1]

    yield make
    for server, channel in made:
        channel.close()
        server.listener.close()


def test_a_post_is_one_request_with_host_length_and_body(serve):
    server, channel = serve([OK])
    assert channel.post({"webhook-id": "msg_1"}, b'{"a":1}') == 200
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /hooks?x=1 HTTP/1.1"
    port = server.target().port
    assert sorted(lines[1:]) == sorted([f"Host: 127.0.0.1:{port}".encode(), b"webhook-id: msg_1",
                                        b"Content-Length: 7"])
    assert body == b'{"a":1}'


def test_an_answer_of_a_stated_length_keeps_the_connection(serve):
    server, channel = serve([OK, b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"])
    assert [channel.post({}, b"1"), channel.post({}, b"2")] == [200, 204]
    assert server.connections == 1


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n\r\n"], ids=["close", "chunked", "http-1.0", "no-length"])
def test_an_answer_that_does_not_keep_the_connection_closes_it(serve, answer):
    server, channel = serve([answer, OK])
    assert channel.post({}, b"1") == 200
    assert channel.sock is None
    assert channel.post({}, b"2") == 200 and server.connections == 2


def test_an_interim_answer_is_skipped_and_a_redirect_is_only_a_status(serve):
    server, channel = serve([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\n"
                             b"Location: /x\r\nContent-Length: 0\r\n\r\n"])
    assert channel.post({}, b"1") == 302
    assert len(server.requests) == 1  # the Location is not followed


def test_an_answer_that_is_not_http_is_no_answer(serve):
    _, channel = serve([b"SSH-2.0-OpenSSH\r\n\r\n"])
    with pytest.raises(OSError, match="not an HTTP"):
        channel.post({}, b"1")


def test_posts_to_a_kept_connection_go_together_and_answer_in_order(serve):
    server, channel = serve([OK] + [b"HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n" % code
                                   for code in (201, 500, 204)])
    statuses: list[int] = []
    channel.post_all([({}, b"%d" % n) for n in range(4)], statuses)
    assert statuses == [200, 201, 500, 204]
    assert server.connections == 1
    assert [r.rpartition(b"\r\n\r\n")[2] for r in server.requests] == [b"0", b"1", b"2", b"3"]


def test_posts_a_closed_connection_left_unanswered_are_sent_again_on_a_fresh_one(serve):
    server, channel = serve([OK, OK, b"", OK, OK])
    statuses: list[int] = []
    channel.post_all([({}, b"%d" % n) for n in range(4)], statuses)
    assert statuses == [200, 200, 200, 200]
    assert server.connections == 2
    bodies = [r.rpartition(b"\r\n\r\n")[2] for r in server.requests]
    assert bodies == [b"0", b"1", b"2", b"2", b"3"]  # the third twice: at least once


def post_alone_to(server: RawServer, timeout_s: float = 2.0) -> int:
    """Make one lone POST (webhook_channel.post_alone) to the server; return its status."""
    return asyncio.run(post_alone(server.target(), {"webhook-id": "msg_1"}, b'{"a":1}',
                                  timeout_s))


def test_a_lone_post_is_the_same_request_and_skips_an_interim_answer(serve):
    server, channel = serve([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\n"
                             b"Location: /x\r\nContent-Length: 0\r\n\r\n", OK])
    assert post_alone_to(server) == 302
    assert channel.post({"webhook-id": "msg_1"}, b'{"a":1}') == 200
    assert server.requests[0] == server.requests[1]  # as a kept connection's POST


@pytest.mark.parametrize(("answers", "error", "why"), [
    ([b"SSH-2.0-OpenSSH\r\n\r\n"], OSError, "not an HTTP"), ([b""], OSError, "no whole answer"),
    ([], TimeoutError, None)], ids=["not-http", "closed", "silent"])
def test_a_lone_post_without_an_answer_is_an_os_error(serve, answers, error, why):
    """No HTTP, a close, or nothing in time (a listener that accepts nothing: the connection
    waits in its backlog) fail the try."""
    server, _ = serve(answers)
    with pytest.raises(error, match=why):
        post_alone_to(server, timeout_s=0.5)
