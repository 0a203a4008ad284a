"""The WSGI entry point for gunicorn: `gunicorn service.entrypoints.wsgi:app`."""

import gc

from service.api.app import create_app

YOUNG_OBJECTS = 20_000
"""Objects the collector lets pile up before it looks for cycles (CPython's default is 700).
A request leaves few cycles behind, so at the default a collection ran every few requests to
find almost nothing: about 1% of the API's CPU under bench.load's load, a quarter of that now."""

app = create_app()
gc.freeze()  # the modules and the app live as long as the worker: collections skip them
gc.set_threshold(YOUNG_OBJECTS)
