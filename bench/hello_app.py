"""The ceiling for bench.load: a Flask hello-world served by the same gunicorn command line.

`gunicorn bench.hello_app:app` answers `GET /` with a small JSON body, doing no I/O, so its
requests per second are what the HTTP stack alone allows on this machine.
"""

from __future__ import annotations

from flask import Flask, Response

app = Flask("hello")


@app.get("/")
def hello() -> Response:
    """Answer a tiny JSON body, as the game API answers JSON."""
    return Response('{"hello":"world"}', 200, mimetype="application/json")
