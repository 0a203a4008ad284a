"""API tests talk to the real app over a real Redis server; every answer is checked against
openapi.yaml by the ContractClient."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import ContractClient


@pytest.fixture
def settings(redis_url: str) -> Settings:
    """Settings pointing at the test Redis, with AI turns quick and seeds honoured."""
    return Settings(redis_url=redis_url, ai_budget_s=0.02, seeded_games=True,
                    rate_limit_per_token=0, rate_limit_per_address=0)  # one client, many requests


@pytest.fixture
def services(settings: Settings, redis_client: Any) -> Services:
    """The real services over a flushed Redis database."""
    return build(settings)


@pytest.fixture
def app(services: Services) -> Flask:
    """The app under test."""
    return create_app({"TESTING": True}, services=services)


@pytest.fixture
def client(app: Flask) -> Iterator[ContractClient]:
    """A test client whose every answer must fit openapi.yaml."""
    yield ContractClient(app.test_client())
