"""A game a back end runs unattended (issue 19, API.md "Lifecycle"): two humans and an AI.

Seat 0's back end moves only when a `turn` notification for its seat arrives (a real HTTP
receiver on loopback): it then reads the seat's state with its token and moves on that
version, and never reads otherwise. Seat 1 plays as an ordinary client, then leaves mid-hand;
a real worker plays the AI's seat 2, seat 1's turns after it left, and delivers every
notification. The match ends, seat 0 made every move of its own, and the export passes
`spinner verify`."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from standardwebhooks.webhooks import Webhook

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from tests.api.driver import auth
from tests.support.webhook_receiver import Receiver
from tests.workers import WorkerProcess, wait_until

PLAYERS = [{"name": "Ann", "kind": "human"}, {"name": "Bea", "kind": "human"},
           {"name": "Cy", "kind": "ai", "level": "greedy"}]
RULES = {"hands": 1, "turn_seconds": 60}
"""One hand, under a clock that never runs out here: every `turn` body names its deadline."""
MOVES = {"tile_played", "tile_drawn", "passed"}
ENDS_WITHIN_S = 12.0


class BackEnd:
    """Seat 0's back end: for each `turn` body naming its seat it reads the seat's state and,
    if the seat is still to move, sends its first legal move on that state's version."""

    def __init__(self, client: FlaskClient, game: str, token: str, receiver: Receiver) -> None:
        self.client, self.game, self.token, self.receiver = client, game, token, receiver
        self.moved: list[int] = []  # the versions it moved on (answered 200)
        self.deadlines: list[tuple[str | None, str | None]] = []  # body's, state's: same version
        self.failures: list[str] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        """Answer each arrival until stopped."""
        while not self.stopped.is_set():
            try:
                body = self.receiver.arrivals.get(timeout=0.05).json
            except queue.Empty:
                continue
            if body["type"] == "turn" and body["seat"] == 0:
                self.answer(body)

    def answer(self, body: dict[str, Any]) -> None:
        """Read the seat's state and move if it is to move (a stale body finds it is not)."""
        mine = self.client.get(self.game, headers=auth(self.token)).json
        if mine["version"] == body["version"]:
            self.deadlines.append((body["turn_deadline"], mine["turn_deadline"]))
        if mine["status"] != "playing" or mine["turn"] != 0:
            return
        moved = self.client.post(f"{self.game}/moves", json=mine["legal_moves"][0], headers={
            **auth(self.token), "If-Match": f'"{mine["version"]}"'})
        if moved.status_code == 200:
            self.moved.append(mine["version"])
        elif moved.status_code != 412:  # 412: another append landed since it read
            self.failures.append(f"{moved.status_code} {moved.json}")


@pytest.fixture
def app(redis_url: str, redis_client: Any) -> Any:
    """The real app, which lets notify URLs be on loopback."""
    settings = Settings(redis_url=redis_url, ai_budget_s=0.02, seeded_games=True,
                        rate_limit_per_token=0, rate_limit_per_address=0,
                        webhooks_allow_private=True, webhook_retry_s="1")
    return create_app({"TESTING": True}, services=build(settings))


@pytest.fixture
def worker(redis_url: str, redis_client: Any) -> Iterator[WorkerProcess]:
    """One real worker (AI turns, deliveries) that may call loopback."""
    process = WorkerProcess(redis_url, ai_budget_s="0.02", ai_min_delay_s="0.01",
                            webhooks_allow_private="1")
    yield process
    process.stop()


def play_seat_1_then_leave(client: FlaskClient, game: str, token: str) -> int:
    """Play seat 1 as an ordinary client (it polls) for one move, then leave on its next
    turn, mid-hand; wait for the match to end; return the leave's version."""
    left_at, ends = None, time.monotonic() + ENDS_WITHIN_S
    moved = 0
    while (mine := client.get(game, headers=auth(token)).json)["status"] == "playing":
        assert time.monotonic() < ends, "the game did not end"
        if left_at is not None or mine["turn"] != 1:
            time.sleep(0.02)
        elif moved < 1:
            answer = client.post(f"{game}/moves", json=mine["legal_moves"][0], headers={
                **auth(token), "If-Match": f'"{mine["version"]}"'})
            assert answer.status_code == 200, answer.json
            moved += 1
        else:
            left = client.post(f"{game}/leave", json={"replace_with": "greedy"},
                               headers=auth(token))
            assert left.status_code == 200, left.json
            left_at = left.json["version"]
    assert left_at is not None, "the hand ended before seat 1 could leave it"
    return left_at


def test_a_game_run_by_notifications_and_a_leave_ends_and_its_export_verifies(
        app: Any, worker: WorkerProcess, tmp_path: Path) -> None:
    client = app.test_client()
    with Receiver() as receiver:
        created = client.post("/v1/games", json={"players": PLAYERS, "rules": RULES, "seed": 21,
                                                 "notify": {"url": receiver.url()}})
        assert created.status_code == 201, created.json
        game, secret = created.headers["Location"], created.json["notify"]["secret"]
        tokens = {s["seat"]: s["token"] for s in created.json["seats"] if "token" in s}
        back_end = BackEnd(app.test_client(), game, tokens[0], receiver)
        back_end.thread.start()
        try:
            left_at = play_seat_1_then_leave(client, game, tokens[1])
        finally:
            back_end.stopped.set()
            back_end.thread.join(5)
        export = client.get(f"{game}/export")
        (tmp_path / "game.json").write_bytes(export.get_data())
        assert spinner(["verify", str(tmp_path / "game.json")]) == 0
        events = export.json["events"]
        assert back_end.failures == []
        ours = {e["seq"] for e in events if e["seat"] == 0 and e["type"] in MOVES
                and e["seq"] > created.json["version"]}  # not the boneyard search (R9)
        assert {version + 1 for version in back_end.moved} == ours  # it made each of them
        assert back_end.moved and not any(e["type"] == "turn_timed_out" for e in events)
        seat_1 = [e for e in events if e["seat"] == 1 and e["seq"] >= left_at]
        assert seat_1[0]["type"] == "seat_left" and seat_1[0]["data"] == {"level": "greedy"}
        assert any(e["type"] in MOVES for e in seat_1[1:])  # its AI played on
        hand_ended = next(e["seq"] for e in events if e["type"] == "hand_ended")
        assert left_at < hand_ended  # it left mid-hand
        assert wait_until(lambda: receiver.bodies("game_ended"), 5)
        assert receiver.bodies("game_ended")[0]["version"] == events[-1]["seq"]
        turns = receiver.bodies("turn")
        assert [t["version"] for t in turns] == sorted({t["version"] for t in turns})
        assert all(t["turn_deadline"] for t in turns)  # read from the state view
        assert back_end.deadlines and all(body == state for body, state in back_end.deadlines)
        for received in receiver.received:
            assert Webhook(secret).verify(received.body, received.headers) == received.json
