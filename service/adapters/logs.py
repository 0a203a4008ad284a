"""Structured logs: one JSON object a line, carrying the id of the request being served."""

from __future__ import annotations

import functools
import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TextIO

import orjson

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The id of the request this thread is serving (None outside requests)."""

_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def utc_millis(created: float, zone: str = "+00:00") -> str:
    """Return a Unix time as RFC 3339 in UTC, to the millisecond (`...T03:40:00.123+00:00`);
    `zone` names UTC (`+00:00` or `Z`)."""
    whole = int(created)
    micros = round((created - whole) * 1e6)  # as datetime.fromtimestamp rounds
    whole, micros = (whole + 1, micros - 1_000_000) if micros >= 1_000_000 else (whole, micros)
    return f"{_utc_second(whole)}.{micros // 1000:03d}{zone}"


@functools.lru_cache(maxsize=4)
def _utc_second(whole: int) -> str:
    return datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")


class JsonFormatter(logging.Formatter):
    """Format a record as JSON: time, level, logger, message, request_id and any `extra`."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the record as one line of JSON."""
        fields = vars(record)
        entry = {
            "time": utc_millis(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": request_id.get(),
            **{k: fields[k] for k in sorted(fields.keys() - _RECORD_FIELDS)},  # the `extra`
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        try:
            return orjson.dumps(entry, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # what orjson refuses: an integer beyond 64 bits, a lone surrogate
            return json.dumps(entry, default=str)


def json_handler(stream: TextIO | None = None) -> logging.Handler:
    """Return a handler writing JSON lines to `stream` (default: stderr)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    return handler


def configure(level: int = logging.INFO) -> None:
    """Log JSON lines to stderr from `level` up, unless logging is configured already.

    Every record skips what no line shows: the caller's source file and line (a stack walk)
    and the multiprocessing process name (the logging HOWTO's "Optimization"). The thread
    and process ids stay: gunicorn's own log lines print the process id.
    """
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logMultiprocessing = False
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(json_handler())
        root.setLevel(level)
