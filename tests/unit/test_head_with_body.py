"""One send an answer: `HeadWithBody` holds gunicorn's head back until the body's first write
(issue 21: each send over loopback costs the server a system call and the peer a wake-up)."""

from __future__ import annotations

from service.entrypoints.gunicorn_worker import HeadWithBody


class Recording:
    """A socket that records each send, in order."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        """Record one send."""
        self.sent.append(bytes(data))

    def fileno(self) -> int:
        """A number, as a socket's."""
        return 7


def test_an_answers_head_and_body_go_out_in_one_send() -> None:
    sock = Recording()
    writer = HeadWithBody(sock)  # type: ignore[arg-type]
    writer.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
    assert sock.sent == []
    writer.sendall(b"{}")
    writer.flush()
    assert sock.sent == [b"HTTP/1.1 200 OK\r\n\r\n{}"]


def test_a_stream_sends_each_chunk_after_the_first_as_it_comes() -> None:
    sock = Recording()
    writer = HeadWithBody(sock)  # type: ignore[arg-type]
    for data in (b"head", b"one", b"two", b"three"):
        writer.sendall(data)
    assert sock.sent == [b"headone", b"two", b"three"]


def test_a_head_without_a_body_goes_out_when_the_answer_is_done() -> None:
    sock = Recording()
    writer = HeadWithBody(sock)  # type: ignore[arg-type]
    writer.sendall(b"HTTP/1.1 304 Not Modified\r\n\r\n")
    writer.flush()
    writer.flush()
    assert sock.sent == [b"HTTP/1.1 304 Not Modified\r\n\r\n"]


def test_any_other_use_of_the_socket_sends_what_is_held_first() -> None:
    """A sendfile after the head, say, must not overtake it: bytes are never reordered."""
    sock = Recording()
    writer = HeadWithBody(sock)  # type: ignore[arg-type]
    writer.sendall(b"head")
    assert writer.fileno() == 7 and sock.sent == [b"head"]
    writer.sendall(b"body")
    assert sock.sent == [b"head", b"body"]
