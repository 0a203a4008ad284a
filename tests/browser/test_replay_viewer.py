"""Issue 20, point 4: the replay viewer of a finished game steps through every version with
every hand shown, ends on the API's totals, and checks the export's hash chain in the
browser (Web Crypto), which a tampered export fails."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from service.game.events import canonical_json
from tests.browser.conftest import Console
from tests.support.serve import call

NAME = "Zoë ★ 名前"
"""Non-ASCII text in the log: the browser's canonical JSON must write it as orjson does."""
DEADLINE_S = 30


def finished_game(base: str, hands: int = 1) -> str:
    """A match between a human seat (played by the API, its first legal move each turn) and
    a greedy AI, played to its end; return its id."""
    status, _, created = call("POST", f"{base}/v1/games", {"players": [
        {"name": NAME, "kind": "human"}, {"name": "Bot", "kind": "ai", "level": "greedy"}],
        "rules": {"hands": hands}})
    assert status == 201, created
    game_id, token = created["game_id"], created["seats"][0]["token"]
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        _, _, state = call("GET", f"{base}/v1/games/{game_id}", token=token)
        if state["status"] == "finished":
            return str(game_id)
        if state["legal_moves"]:
            call("POST", f"{base}/v1/games/{game_id}/moves", state["legal_moves"][0], token)
        else:
            time.sleep(0.02)
    raise AssertionError("the match did not end")


@pytest.fixture(scope="module")
def game_id(live: str) -> str:
    """A finished two-hand game."""
    return finished_game(live, hands=2)


def test_the_replay_steps_through_every_version_to_the_apis_totals(
        page: Page, live: str, game_id: str, console: Console) -> None:
    _, _, export = call("GET", f"{live}/v1/games/{game_id}/export")
    count = len(export["events"])
    page.goto(f"{live}/replay/{game_id}")
    expect(page.locator("#at")).to_have_text("1")
    expect(page.locator("#count")).to_have_text(str(count))
    for version in (2, 3, 4):
        page.click("#forward")
        expect(page.locator("#version")).to_have_text(str(version))
    page.click("#back")
    expect(page.locator("#version")).to_have_text("3")
    middle = count // 2
    page.locator("#slider").fill(str(middle))
    expect(page.locator("#version")).to_have_text(str(middle))
    check_every_hand_is_shown(page, live, game_id, middle)
    page.click("#last")
    expect(page.locator("#version")).to_have_text(str(count))
    _, _, final = call("GET", f"{live}/v1/games/{game_id}")
    shown = [int(t) for t in page.locator("#match-end tbody td").all_inner_texts()]
    assert shown == [p["total"] for p in final["players"]] == export["events"][-1]["data"]["totals"]
    assert page.is_disabled("#forward") and page.is_disabled("#last")
    page.click("#first")
    expect(page.locator("#version")).to_have_text("1")
    assert console.errors == []


def check_every_hand_is_shown(page: Page, base: str, game_id: str, version: int) -> None:
    """Each seat's tiles at `version` are drawn, as many as its tile count (R25 no longer
    hides them: the match has ended)."""
    _, _, state = call("GET", f"{base}/v1/games/{game_id}/state?version={version}")
    for player in state["players"]:
        tiles = page.locator(f"#players section[aria-label^='seat {player['seat']}:'] li")
        assert tiles.count() == player["tile_count"]


def test_verify_says_the_chain_holds(page: Page, live: str, game_id: str,
                                     console: Console) -> None:
    page.goto(f"{live}/replay/{game_id}")
    page.click("#verify")
    expect(page.locator("#verify-result")).to_contain_text("The chain holds")
    assert console.errors == []


def test_verify_finds_a_tampered_export(page: Page, live: str, game_id: str,
                                        console: Console) -> None:
    """An export whose one hand's points were changed breaks the chain at that event."""
    changed: list[int] = []

    def tampered(route: Route) -> None:
        export: dict[str, Any] = route.fetch().json()
        ended = next(e for e in export["events"] if e["type"] == "hand_ended")
        ended["data"]["points"][0] += 1
        changed.append(ended["seq"])
        route.fulfill(json=export)

    page.route("**/export", tampered)
    page.goto(f"{live}/replay/{game_id}")
    page.click("#verify")
    expect(page.locator("#verify-result")).to_contain_text(
        f"does not hold: event {changed[0]}: its hash")
    assert console.errors == []


def test_an_unfinished_game_has_no_replay_yet(page: Page, live: str, console: Console) -> None:
    status, _, created = call("POST", f"{live}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}]})
    assert status == 201
    page.goto(f"{live}/replay/{created['game_id']}")
    expect(page.locator("#problem")).to_contain_text("has not ended yet")
    assert page.is_hidden("#viewer")
    assert console.unexpected("status of 409") == []


def test_the_canonical_json_is_pythons(page: Page, live: str, console: Console) -> None:
    """The page's canonical JSON of awkward text is the service's, byte for byte (on the
    rules page, which draws docs/RULES.md)."""
    page.goto(f"{live}/rules")
    expect(page.locator("#rulebook h2").first).to_have_text("The tiles")
    value = {"b": [NAME, "\u0001\n\t\"\\/\u2028\u007f", -3, 0], "a": {"z": None, "é": True}}
    mine = page.evaluate("""async (value) => {
        const {canonical} = await import("/web/js/verify.js");
        return canonical(value);
    }""", value)
    assert mine.encode() == canonical_json(value)
    assert json.loads(mine) == value
    assert console.errors == []
