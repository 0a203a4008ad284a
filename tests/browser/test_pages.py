"""Issue 20, point 1: the pages come with the API, from the package, under a strict
Content-Security-Policy, and leave the API's answers as they were."""

from __future__ import annotations

import re
import urllib.request

import pytest

from service.api.pages import SECURITY
from tests.support.serve import LOOPBACK_ONLY

PAGES = ("/", "/replay/0123456789abcdef", "/rules", "/rules/all-fives")
ASSETS = {"/web/site.css": "text/css", "/web/js/game.js": "javascript",
          "/web/js/replay.js": "javascript", "/web/rules.md": "text/",
          "/web/allfives.md": "text/"}
INLINE = re.compile(r"<script(?![^>]*\bsrc=)|\sstyle=|\son[a-z]+=|javascript:|<style", re.I)
"""What a strict CSP would block in a page: inline script or style, handlers, script URLs."""


def fetch(url: str) -> tuple[int, dict[str, str], str]:
    """GET `url`; return the status, the headers and the text."""
    with LOOPBACK_ONLY.open(url, timeout=10) as answer:
        return answer.status, dict(answer.headers), answer.read().decode()


@pytest.mark.parametrize("path", PAGES)
def test_each_page_is_static_html_under_a_strict_csp(live: str, path: str) -> None:
    status, headers, html = fetch(live + path)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "unsafe" not in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert INLINE.search(html) is None
    assert '<script type="module" src="/web/js/' in html


def test_the_assets_and_the_full_rules_are_served(live: str) -> None:
    for path, kind in ASSETS.items():
        status, headers, text = fetch(live + path)
        assert status == 200 and kind in headers["Content-Type"], path
        assert headers["Content-Security-Policy"] == SECURITY["Content-Security-Policy"]
    assert "R26" in fetch(live + "/web/rules.md")[2]
    assert "F16" in fetch(live + "/web/allfives.md")[2]


def test_the_pages_use_only_the_public_api(live: str) -> None:
    """Every path the scripts ask for is under /v1 (or the page's own /web assets)."""
    asked = set()
    for module in ("api", "game", "replay", "rules"):
        source = fetch(f"{live}/web/js/{module}.js")[2]
        asked |= set(re.findall(r"""fetch\(\s*[`"']([^`"'$]*)""", source))
        asked |= set(re.findall(r"""EventSource\(\s*[`"']([^`"'$]*)""", source))
        asked |= set(re.findall(r"""["'](/web/[\w.]+\.md)["']""", source))  # fetch(file)
    assert asked == {"/v1", "/web/rules.md", "/web/allfives.md"}


def test_the_apis_answers_carry_no_page_headers(live: str) -> None:
    request = urllib.request.Request(f"{live}/healthz")
    with LOOPBACK_ONLY.open(request, timeout=10) as answer:
        assert "Content-Security-Policy" not in answer.headers
        assert answer.headers["Content-Type"] == "application/json"
