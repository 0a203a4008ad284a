"""The client asking: by its API key, else by its address."""

from __future__ import annotations

from flask import request

from service.usecases.clients import Client


def asking_client() -> Client:
    """Return the client this request counts against."""
    return Client(f"addr:{request.remote_addr or 'unknown'}")
