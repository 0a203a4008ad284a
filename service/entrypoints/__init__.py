"""Entry points: the `spinner` command, the WSGI app, gunicorn's worker class, and the
supervision of child processes (the API, the AI worker and the embedded redis-server)."""
