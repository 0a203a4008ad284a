"""Browser tests (issue 20): Debian's Chromium, driven by Playwright for Python, against a
live stack on loopback (a real redis-server, a real rq worker, the app over HTTP). One stack
and one browser for the whole session; each test gets a fresh page, whose console errors the
test checks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, sync_playwright
from werkzeug.serving import make_server

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.redis_server import RedisServer
from tests.workers import WorkerProcess

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's package (.ci/run installs it): Playwright cannot download its own browsers here."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
SCREENSHOTS = Path(__file__).parent / "screenshots"
"""Where the tests save what they saw (gitignored; the README shows docs/screenshot.png)."""
WAIT_MS = 10_000
AI_DELAY_S = 0.01
STREAM_CHECK_S = 0.5
"""Keep-alive of the streams: a stream whose page has closed ends within this."""


@pytest.fixture(scope="package")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Yield the URL of the app served over HTTP on loopback (werkzeug's threaded server, in
    this process) with a real rq worker beside it, on a real Redis of its own (the session's
    serves other tests, whose queues this worker must not take); AI turns quick and the
    AI-game cap lifted, for these tests' many games from one address."""
    with RedisServer(tmp_path_factory.mktemp("browser-redis"), appendonly=False) as redis:
        yield from _served(redis.url)


def _served(redis_url: str) -> Iterator[str]:
    """Serve the app and a worker on `redis_url` until the generator is closed."""
    settings = Settings(redis_url=redis_url, ai_min_delay_s=AI_DELAY_S,
                        ai_games_per_client=100, stream_keepalive_s=STREAM_CHECK_S)
    worker = WorkerProcess(redis_url, AI_MIN_DELAY_S=str(AI_DELAY_S))
    server = make_server("127.0.0.1", 0, create_app(services=build(settings)), threaded=True)
    server.daemon_threads = False  # server_close() waits for each stream to see its page gone
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        worker.stop()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """Playwright's driver, for the session."""
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}: `apt-get install chromium` (.ci/run does)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One Chromium for the session."""
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


class Console:
    """The errors a page reported: console messages of type error and uncaught exceptions."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def message(self, message: ConsoleMessage) -> None:
        """Keep a console message if it is an error."""
        if message.type == "error":
            self.errors.append(message.text)

    def unexpected(self, *expected: str) -> list[str]:
        """The errors but those that contain one of `expected`."""
        return [e for e in self.errors if not any(text in e for text in expected)]


@pytest.fixture
def console() -> Console:
    """The errors the test's page reports."""
    return Console()


@pytest.fixture
def page(browser: Browser, console: Console, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page (its own context: its own session storage), 1280 x 800 unless the test's
    `viewport` marker says otherwise; its screenshot is saved as <test name>.png."""
    marker = request.node.get_closest_marker("viewport")
    size = {"width": marker.args[0], "height": marker.args[1]} if marker else None
    context = browser.new_context(viewport=size or {"width": 1280, "height": 800})
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    tab.on("console", console.message)
    tab.on("pageerror", lambda error: console.errors.append(f"uncaught: {error}"))
    yield tab
    SCREENSHOTS.mkdir(exist_ok=True)
    tab.screenshot(path=SCREENSHOTS / f"{request.node.name}.png", full_page=True)
    context.close()
