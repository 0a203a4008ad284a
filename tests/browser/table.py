"""The game page as a player sees it, for the browser tests: start a game from its form,
take a turn by clicking (or by keys), read what it shows, and ask the API what is true."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Page, expect

from tests.support.serve import call

YOUR_MOVE = ("#hand button:not([disabled]), #draw:not([disabled]), #pass:not([disabled]), "
             "#match-end:not([hidden])")
"""What the page shows once it is your turn (or the match is over)."""


@dataclass
class Table:
    """A game page at `base`, its game and seat once started."""

    page: Page
    base: str
    game_id: str = ""
    token: str = ""
    shown: int = 0
    """The version the page showed when it last took a turn."""
    exposures: list[dict[str, Any]] = field(default_factory=list)
    """Each spinner exposure choice the page asked for: the tile, the end, the values."""

    def start(self, name: str = "Ann", opponents: int = 1, hands: int = 1,
              pace_ms: int = 0, target: int | None = None) -> Table:
        """Open the page, fill in the new game's form and start it: Spinner, or All Fives
        to `target` when one is given."""
        self.page.goto(f"{self.base}/?pace={pace_ms}")
        self.page.fill("input[name=name]", name)
        if target is not None:
            self.page.select_option("select[name=variant]", "all_fives")
            self.page.select_option("select[name=target]", str(target))
        self.page.select_option("select[name=opponents]", str(opponents))
        self.page.select_option("select[name=level]", "greedy")
        self.page.select_option("select[name=hands]", str(hands))
        self.page.click("button[type=submit]")
        self.page.wait_for_selector("#table:not([hidden])")
        self.game_id = self.page.url.rsplit("game=", 1)[1]
        self.token = self.held()["token"]
        return self

    def held(self) -> dict[str, Any]:
        """What this tab's session storage holds for its game (its seat's token)."""
        raw = self.page.evaluate(f"sessionStorage.getItem('spinner.seat.{self.game_id}')")
        return json.loads(raw)

    def wait_for_my_move(self) -> bool:
        """Wait until it is my turn at the game's newest version; False if the match is over
        instead. With no pace the page may show a version on the way that says it is my
        turn while the events after it (a hand's end, the next hand's deal) are still
        coming: then wait for the page to move on."""
        version = self.page.locator("#version")
        for _ in range(1000):
            self.page.wait_for_selector(YOUR_MOVE)
            shown = self.version()
            latest = self.api_state()
            if latest["status"] == "finished" or latest["turn"] == latest["seat"]:
                expect(version).to_have_text(str(latest["version"]))
                break
            expect(version).not_to_have_text(str(shown))
        return self.page.locator("#match-end").is_hidden()

    def version(self) -> int:
        """The version the page shows."""
        return int(self.page.inner_text("#version"))

    def api_state(self, version: int | None = None) -> dict[str, Any]:
        """The seat's state from the API (at `version`, or now)."""
        path = f"/state?version={version}" if version else ""
        status, _, state = call("GET", f"{self.base}/v1/games/{self.game_id}{path}",
                                token=self.token)
        assert status == 200, state
        return state

    def take_turn(self, prefer_choice: bool = True) -> None:
        """Make one move by clicking: a tile that can leave a choice of values if there is
        one (else a plain tile, else any), then its end, then a value; or Draw, or Pass.
        Checks on the way that the page offers exactly what the rules allow."""
        self.shown = self.version()
        state = self.api_state(self.shown)
        legal = state["legal_moves"]
        self.check_offers(state)
        plays = [m for m in legal if m["action"] == "play"]
        if not plays:
            self.page.click("#draw" if {"action": "draw"} in legal else "#pass")
            return
        tile, end = choose(plays, prefer_choice)
        self.page.click(f"#hand button[data-tile='{tile}']")
        self.page.click(f"#choice button[data-end='{end or 'centre'}']")
        values = sorted(m["expose"] for m in plays if (m["tile"], m["end"]) == (tile, end))
        if len(values) > 1:
            offered = self.page.locator("#choice button[data-expose]")
            assert sorted(int(v) for v in offered.evaluate_all(
                "bs => bs.map(b => b.dataset.expose)")) == values
            self.exposures.append({"tile": tile, "end": end, "values": values})
            offered.last.click()

    def moved(self) -> None:
        """Wait until the page shows the move it sent landed (a new version, no refusal)."""
        expect(self.page.locator("#version")).not_to_have_text(str(self.shown))
        assert self.page.inner_text("#problem") == ""

    def check_offers(self, state: dict[str, Any]) -> None:
        """The page's tiles are enabled exactly when they have a legal play, and Draw and
        Pass exactly when the rules allow them (R16)."""
        legal = state["legal_moves"]
        playable = {m["tile"] for m in legal if m["action"] == "play"}
        enabled = set(self.page.locator("#hand button:not([disabled])").evaluate_all(
            "bs => bs.map(b => b.dataset.tile)"))
        assert enabled == playable
        assert self.page.locator("#hand button").count() == len(state["hand"])
        assert self.page.is_enabled("#draw") == ({"action": "draw"} in legal)
        assert self.page.is_enabled("#pass") == ({"action": "pass"} in legal)

    def play_to_the_end(self, limit: int = 200) -> None:
        """Take turns until the match is over."""
        for _ in range(limit):
            if not self.wait_for_my_move():
                return
            self.take_turn()
            self.moved()
        raise AssertionError("the match did not end")


def choose(plays: list[dict[str, Any]], prefer_choice: bool) -> tuple[str, str | None]:
    """A (tile, end) to play: one that leaves a choice of values if asked and there is one,
    else one without a spinner half (keeping them for a choice later), else the first."""
    pairs = [(m["tile"], m["end"]) for m in plays]
    if prefer_choice:
        choices = [pair for pair in pairs if pairs.count(pair) > 1]
        if choices:
            return choices[0]
        plain = [pair for pair in pairs if "S" not in pair[0]]
        if plain:
            return plain[0]
    return pairs[0]
