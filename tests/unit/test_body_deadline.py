"""The body read deadline (issue 17): one deadline for the whole body, counted from its first
read, so a client trickling its body a byte at a time is cut off too."""

from __future__ import annotations

import io
from types import SimpleNamespace

import gevent
import pytest

from service.api import problems
from service.entrypoints.body_deadline import DeadlineBody


class Trickle:
    """A body that gives one byte a read, `pause` seconds after being asked."""

    def __init__(self, data: bytes, pause: float) -> None:
        self.data = io.BytesIO(data)
        self.pause = pause

    def read(self, size: int | None = None) -> bytes:
        """Wait, then return the next byte (b"" at the end)."""
        gevent.sleep(self.pause)
        return self.data.read(1)


def request(body: object) -> SimpleNamespace:
    """A stand-in for gunicorn's request: its body and its must_close flag."""
    return SimpleNamespace(body=body, must_close=False)


def read_all(body: DeadlineBody) -> bytes:
    """Read `body` to its end, a read at a time, as werkzeug does."""
    got = b""
    while chunk := body.read(65536):
        got += chunk
    return got


def test_a_trickled_body_is_cut_off_at_the_deadline_though_each_read_is_quick() -> None:
    sent = request(Trickle(b"x" * 30, pause=0.02))  # each read well within the deadline
    with pytest.raises(problems.BodyTimeout) as cut:
        read_all(DeadlineBody(sent, seconds=0.2))  # the whole would take 0.6 s
    assert cut.value.status == 408 and "0.2 s" in cut.value.detail
    assert sent.must_close  # gunicorn then answers `Connection: close` and closes


def test_a_body_that_arrives_in_time_is_read_whole_and_keeps_the_connection() -> None:
    sent = request(Trickle(b'{"a": 1}', pause=0.001))
    body = DeadlineBody(sent, seconds=5)
    assert read_all(body) == b'{"a": 1}'
    assert not sent.must_close


def test_the_clock_starts_at_the_first_read_and_what_has_arrived_is_read_after_it() -> None:
    sent = request(io.BytesIO(b"line one\nline two\n"))
    body = DeadlineBody(sent, seconds=0.05)
    gevent.sleep(0.1)  # the app has not read yet: no deadline runs
    assert body.readline() == b"line one\n"
    gevent.sleep(0.1)  # now past it, but the rest is there already: no wait, no 408
    assert list(body) == [b"line two\n"]
    assert not sent.must_close
