"""The WSGI entry point for gunicorn: `gunicorn service.wsgi:app`."""

import gc

from service.api import create_app

app = create_app()
gc.freeze()  # the modules and the app live as long as the worker: collections skip them
