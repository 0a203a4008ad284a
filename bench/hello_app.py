"""The ceiling for bench.load: a Flask hello-world served by the same gunicorn command line.

`gunicorn bench.hello_app:app` answers `GET /` with a small JSON body, doing no I/O, so its
requests per second are what the HTTP stack alone allows on this machine. `GET /redis` (only
where REDIS_URL is set: `--floor`) answers the same after one round trip to Redis, the least
any request of the service makes.
"""

from __future__ import annotations

import os

import redis
from flask import Flask, Response

app = Flask("hello")
BODY = '{"hello":"world"}'


@app.get("/")
def hello() -> Response:
    """Answer a tiny JSON body, as the game API answers JSON."""
    return Response(BODY, 200, mimetype="application/json")


if os.environ.get("REDIS_URL"):
    store = redis.Redis.from_url(os.environ["REDIS_URL"])

    @app.get("/redis")
    def hello_redis() -> Response:
        """Answer the same body after one Redis round trip (a key's fields, as a game's meta
        is read; the key does not exist)."""
        store.hgetall("{hello}:meta")
        return Response(BODY, 200, mimetype="application/json")
