"""Issue 20, points 2, 3 and 5: a game against the AI in the browser, by clicking and by
keys, a refused move's explanation, a reload mid-hand, 375 px wide; no console errors."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Route, expect

from service.game.variants import replay_log
from tests.browser.conftest import Console
from tests.browser.table import YOUR_MOVE, Table
from tests.support.serve import call

GAMES_FOR_A_CHOICE = 4
"""Deals are random (a seed is mixed with the random game id), so a game may pass with no
chance to leave a spinner half's value open (R14): about one in eight, playing for one."""


def test_a_whole_one_hand_game_against_greedy_by_clicking(page: Page, live: str,
                                                          console: Console) -> None:
    for _ in range(GAMES_FOR_A_CHOICE):
        table = Table(page, live).start(name="Ann")
        table.play_to_the_end()
        if table.exposures:
            break
    assert table.exposures, "no spinner exposure choice arose"
    final = table.api_state()
    assert final["status"] == "finished"
    shown_totals = page.locator("#match-end tbody td").all_inner_texts()
    assert [int(t) for t in shown_totals] == [p["total"] for p in final["players"]]
    winners = " and ".join("You" if s == 0 else final["players"][s]["name"]
                           for s in final["winners"])
    expect(page.locator("#match-end .winners")).to_have_text(f"Winner: {winners}")
    hand_points = page.locator("#hand-end tbody tr td:last-child").all_inner_texts()
    assert [int(p) for p in hand_points] == final["scores"][0]["points"]
    assert console.errors == []


def test_an_all_fives_match_shows_the_count_each_plays_points_and_replays(
        page: Page, live: str, console: Console) -> None:
    """Issue 22, point 5: All Fives chosen on the form, played to 50 by clicking; the count
    shown at each turn is the one the rules core folds from the export (F9), each play's
    points are in the moves list, and the replay viewer ends on the match's totals."""
    table = Table(page, live).start(target=50)
    table.wait_for_my_move()
    assert table.api_state()["rules"] == {"variant": "all_fives", "target": 50}
    expect(page.locator("#hand-number")).to_have_text("1, first to 50 wins")
    counts: dict[int, int] = {}
    lines: list[str] = []
    for _ in range(200):
        if not table.wait_for_my_move():
            break
        counts[table.version()] = int(page.inner_text("#count-now"))
        lines += page.locator("#moves li").all_inner_texts()
        table.take_turn()
        table.moved()
    final = table.api_state()
    assert final["status"] == "finished" and len(final["winners"]) == 1
    shown_totals = page.locator("#match-end tbody td").all_inner_texts()
    assert [int(t) for t in shown_totals] == [p["total"] for p in final["players"]]
    _, _, export = call("GET", f"{live}/v1/games/{table.game_id}/export")
    for version, count in counts.items():
        hand = replay_log(export["events"][:version]).hand
        assert hand is not None and count == hand.count, version
    assert len(counts) > 3 and any(counts.values())
    assert any(", scoring " in line for line in lines) and any(", no score" in line
                                                                for line in lines)
    page.goto(f"{live}/replay/{table.game_id}")
    expect(page.locator("#rules-link")).to_have_attribute("href", "/rules/all-fives")
    page.click("#last")
    expect(page.locator("#match-end")).to_be_visible()
    assert page.locator("#match-end tbody td").all_inner_texts() == shown_totals
    assert console.errors == []


def test_every_move_by_the_ai_is_shown_one_by_one(page: Page, live: str,
                                                  console: Console) -> None:
    """Three AI seats answer a move within milliseconds; with a pause between moves (here
    200 ms), the table shows each of their versions in turn, and each in the moves list."""
    table = Table(page, live).start(opponents=3, pace_ms=200)
    page.evaluate(WATCH_VERSIONS)
    table.wait_for_my_move()
    first = table.version()
    for _ in range(MOVES_TO_TRY):  # a draw keeps the turn (R16): move until the AI answer
        table.take_turn()
        table.moved()
        table.wait_for_my_move()
        if table.version() > table.shown + 1:
            break
    seen = [int(v) for v in page.evaluate("window.versionsSeen")]
    after = [v for v in seen if v > first]
    assert after == list(range(first + 1, table.version() + 1))  # each one, in order
    assert len(after) >= 4  # the seat's own move, then each AI seat's
    lines = page.locator("#moves li").all_inner_texts()
    assert all(any(line.startswith(f"AI {n} ") for line in lines) for n in (1, 2, 3))
    assert console.errors == []


MOVES_TO_TRY = 30
"""Enough of the seat's moves for one to be a play, after which the AI seats move (a seat
that draws, draws again at most until it can play or the boneyard is empty)."""
WATCH_VERSIONS = """() => {
  const shown = document.querySelector("#version");
  window.versionsSeen = [];
  new MutationObserver(() => {
    const seen = window.versionsSeen;
    if (seen.at(-1) !== shown.textContent) seen.push(shown.textContent);
  }).observe(shown, {childList: true, characterData: true, subtree: true});
}"""
"""Keep each version the page shows, in order (Playwright evaluates it, past the CSP)."""
WATCH_PROBLEMS = """() => {
  const problem = document.querySelector("#problem");
  window.problemsSaid = [];
  new MutationObserver(() => window.problemsSaid.push(problem.textContent))
    .observe(problem, {childList: true, characterData: true, subtree: true});
}"""
"""Keep each thing the page says in its problem line, in order, cleared lines included."""


def test_a_refused_move_shows_the_services_explanation(page: Page, live: str,
                                                       console: Console) -> None:
    """The seat moves from elsewhere (the API) while this page still shows the version
    before: the page's move at that version is refused (412), and it says why."""
    table = Table(page, live).start(pace_ms=2000)
    table.wait_for_my_move()
    shown = table.version()
    state = table.api_state()
    status, _, _ = call("POST", f"{live}/v1/games/{table.game_id}/moves",
                        state["legal_moves"][0], table.token)
    assert status == 200
    table.take_turn()  # from the page, still at `shown` for the 2 s pause
    expect(page.locator("#problem")).to_contain_text("The game has moved on")
    assert table.version() == shown
    expect(page.locator("#version")).not_to_have_text(str(shown))  # then it catches up
    assert console.unexpected("status of 412") == []


@pytest.mark.viewport(375, 740)
def test_a_reload_mid_hand_resumes_and_play_goes_on_at_375_px(page: Page, live: str,
                                                              console: Console) -> None:
    table = Table(page, live).start()
    for _ in range(2):
        table.wait_for_my_move()
        table.take_turn()
        table.moved()
    table.wait_for_my_move()
    before = (table.version(), page.locator("#hand button").all_inner_texts())
    page.reload()
    page.wait_for_selector(YOUR_MOVE)
    assert (table.version(), page.locator("#hand button").all_inner_texts()) == before
    assert table.held()["token"] == table.token
    assert page.evaluate("localStorage.length") == 0 and table.token not in page.url
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    keyboard_move(page, table)
    table.wait_for_my_move()
    table.take_turn()
    table.moved()
    assert console.errors == []


def keyboard_move(page: Page, table: Table) -> None:
    """Make a move with the keyboard only (Tab to a button, Enter), its focus visible: a
    tile's Enter moves the focus to its first end, an end's to its first value if asked."""
    table.shown = table.version()
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED_MOVE):
            break
    assert page.evaluate(FOCUSED_MOVE)
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    on_tile = page.evaluate("document.activeElement.matches('#hand button')")
    page.keyboard.press("Enter")
    if on_tile:
        page.keyboard.press("Enter")
        if page.locator("#choice button[data-expose]").count():
            page.keyboard.press("Enter")
    table.moved()


FOCUSED_MOVE = "document.activeElement.matches('#hand button, #draw, #pass')"


def test_a_read_that_fails_once_is_said_and_tried_again_not_left_stale(
        page: Page, live: str, console: Console) -> None:
    """The page reads each version it shows: one read that fails (the service briefly
    unreachable) must not leave it on an old state, which no event would ever wake (the AI
    waits for this seat); it says so, tries again, and clears what it said."""
    table = Table(page, live).start(opponents=3)
    page.evaluate(WATCH_PROBLEMS)
    table.wait_for_my_move()
    failed: list[str] = []

    def fail_once(route: Route) -> None:
        if failed:
            route.continue_()
        else:
            failed.append(route.request.url)
            route.abort()

    page.route("**/state?version=*", fail_once)
    page.route(f"**/v1/games/{table.game_id}", fail_once)
    for _ in range(MOVES_TO_TRY):  # a draw keeps the turn (R16), and reads no other version
        table.take_turn()
        expect(page.locator("#version")).not_to_have_text(str(table.shown))
        if failed:
            break
        table.wait_for_my_move()
    table.wait_for_my_move()  # the read failed here or while the AI moved: said, then cleared
    expect(page.locator("#problem")).to_be_empty()
    said = page.evaluate("window.problemsSaid")
    assert any(text.startswith("The service cannot be reached") for text in said), said
    assert failed and table.version() == table.api_state()["version"]
    assert console.unexpected("net::ERR_FAILED") == []


def test_an_all_fives_game_links_to_its_own_full_rules(
        page: Page, live: str, console: Console) -> None:
    """The rules box follows the game: in All Fives its link opens F1-F16 (docs/ALLFIVES.md,
    its comment line left out), not Spinner's R1-R26."""
    table = Table(page, live).start(target=50)
    table.wait_for_my_move()
    expect(page.locator("#rules-spinner")).to_be_hidden()
    page.click("#rules-all-fives a")
    expect(page).to_have_url(f"{live}/rules/all-fives")
    expect(page.locator("#rulebook h1")).to_have_text("All Fives: the second rule set")
    text = page.inner_text("#rulebook")
    assert "F16. " in text and "<!--" not in text
    assert page.locator("a.plain").evaluate_all("links => links.map(a => a.href)") == [
        f"{live}/web/allfives.md"]  # the plain text's (the one in the rules drawn is gone)
    assert console.errors == []


def test_a_new_game_refused_for_the_ai_game_cap_is_said_in_a_players_words(
        page: Page, live: str, console: Console) -> None:
    """The service's 429 for too many open AI games names API keys, which mean nothing to a
    player: the page says what the player can do; an unreachable service is said so."""
    problem = {"type": "/problems/too-many-ai-games", "status": 429,
               "title": "Too many open games with AI seats",
               "detail": "this client has 4 open games with AI seats or turn clocks, as many "
                         "as it may: end one first; an API key (X-Api-Key) allows 500"}
    answers = [lambda route: route.fulfill(status=429, json=problem, headers={
        "Content-Type": "application/problem+json", "Retry-After": "60"}),
        lambda route: route.abort()]
    page.route("**/v1/games", lambda route: answers.pop(0)(route))
    page.goto(f"{live}/?pace=0")
    for said in ("as many games against the AI under way as one player may",
                 "The service cannot be reached; try again"):
        page.click("button[type=submit]")
        expect(page.locator("#setup-problem")).to_contain_text(said)
        assert "API key" not in page.inner_text("#setup-problem")
    assert page.is_hidden("#table") and answers == []
    assert console.unexpected("status of 429", "net::ERR_FAILED") == []


def test_keys_keep_the_focus_among_the_tiles_from_one_turn_to_the_next(
        page: Page, live: str, console: Console) -> None:
    table = Table(page, live).start(opponents=2)
    table.wait_for_my_move()
    expect(page.locator("#count-now")).to_be_hidden()  # All Fives' count only
    expect(page.locator("#rules-spinner")).to_be_visible()
    expect(page.locator("#rules-all-fives")).to_be_hidden()
    for _ in range(3):
        keyboard_move(page, table)
        if not table.wait_for_my_move():
            break
        assert page.evaluate(FOCUSED_MOVE)  # no Tab back from the top of the page
    assert console.errors == []


def test_a_reload_after_the_match_shows_its_last_hand_and_its_end(
        page: Page, live: str, console: Console) -> None:
    table = Table(page, live).start()
    table.play_to_the_end()
    points = page.locator("#hand-end tbody tr td:last-child").all_inner_texts()
    page.reload()
    expect(page.locator("#match-end")).to_be_visible()
    expect(page.locator("#hand-end")).to_be_visible()
    assert page.locator("#hand-end tbody tr td:last-child").all_inner_texts() == points
    assert [int(p) for p in points] == table.api_state()["scores"][-1]["points"]
    assert console.errors == []
