"""The stream as clients use it (issue 18): a `turn` frame after each append tells whose turn
it is and at which version, resumption stays exact, and a stream ticket lets a browser's
EventSource follow a seat's stream without its token in the URL. Every answer is checked
against openapi.yaml, every frame against its `StreamFrame` schema."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import ContractClient, assert_fits_stream, stream_frames
from tests.api.driver import auth, create
from tests.api.test_hostile import fresh_window
from tests.api.test_quotas import sha256
from tests.unit.test_usecases import first_legal
from tests.workers import wait_until


class Listener:
    """Reads a stream in a thread of its own; `text` is what came so far."""

    def __init__(self, app: Flask, path: str, headers: dict[str, str] | None = None) -> None:
        self.text, self.done = "", threading.Event()
        self.chunks: list[str] = []  # as the server wrote them
        self.stopping = False
        self.status: int | None = None
        self.thread = threading.Thread(target=self._read, args=(app, path, headers or {}))
        self.thread.start()

    def _read(self, app: Flask, path: str, headers: dict[str, str]) -> None:
        with app.test_client() as raw:
            answer = ContractClient(raw).get(path, headers=headers, buffered=False)
            self.status = answer.status_code
            for chunk in answer.response:
                self.chunks.append(chunk.decode())
                self.text += self.chunks[-1]
                if self.stopping:
                    break
            answer.close()
        self.done.set()

    def turns(self) -> list[dict[str, Any]]:
        """The data of every `turn` frame so far."""
        return [json.loads(f["data"]) for f in stream_frames(self.text) if f["event"] == "turn"]

    def wait_for_turns(self, count: int) -> list[dict[str, Any]]:
        """Wait until `count` turn frames came (or the stream ended); return them all."""
        assert wait_until(lambda: len(self.turns()) >= count or self.done.is_set(), 20)
        return self.turns()

    def batches(self) -> list[str]:
        """The chunks that are not keep-alives."""
        return [chunk for chunk in self.chunks if chunk != ": keep-alive\n\n"]

    def stop(self) -> str:
        """Stop reading (at the next frame or keep-alive); return everything read."""
        self.stopping = True
        self.thread.join(timeout=20)
        assert not self.thread.is_alive()
        return self.text


@pytest.fixture
def settings(redis_url: str) -> Settings:
    """Quick keep-alives, so that a listener told to stop stops at once."""
    return Settings(redis_url=redis_url, ai_budget_s=0.02, ai_min_delay_s=0.0,
                    seeded_games=True, stream_keepalive_s=0.05,
                    rate_limit_per_token=0, rate_limit_per_address=0)


def standing(client: ContractClient, game_id: str) -> dict[str, Any]:
    """Where the game stands, read from its state: what a turn frame must say."""
    state = client.get(f"/v1/games/{game_id}").json
    return {"version": state["version"], "turn": state["turn"], "status": state["status"]}


def ticket_for(client: ContractClient, game_id: str, token: str) -> str:
    """Ask for a stream ticket of the game as the token's seat; return it."""
    answer = client.post(f"/v1/games/{game_id}/stream-tickets", headers=auth(token))
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "no-store"
    ticket: str = answer.json["ticket"]
    return ticket


def test_after_each_append_a_turn_frame_says_whose_turn_it_is_at_which_version(
        app, client, services):
    """Humans' moves and an AI's (taken here in process, as a worker takes it) each end
    with a turn frame that says what the state says, without another request."""
    game_id, tokens = create(client, seats=3, seed=21, ai={2: "greedy"})
    services.games.ai_turn(game_id, standing(client, game_id)["version"], first_legal)
    start = standing(client, game_id)
    listener = Listener(app, f"/v1/games/{game_id}/stream",
                        {"Last-Event-ID": str(start["version"])})
    assert listener.wait_for_turns(1) == [start]  # nothing to send yet: where it stands
    seen = [start]
    while len(seen) < 8:
        now = standing(client, game_id)
        if now["turn"] in tokens:
            seat = now["turn"]
            mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json
            client.post(f"/v1/games/{game_id}/moves", json=mine["legal_moves"][0],
                        headers=auth(tokens[seat]))
        else:
            assert services.games.ai_turn(game_id, now["version"], first_legal)
        seen.append(standing(client, game_id))
        assert listener.wait_for_turns(len(seen))[-1] == seen[-1]
    text = listener.stop()
    assert listener.turns() == seen  # one turn frame an append, and each as the state says
    frames = assert_fits_stream(text)
    ids = [int(f["id"]) for f in frames if f["event"] != "turn"]
    assert ids == list(range(start["version"] + 1, seen[-1]["version"] + 1))
    assert all(line.startswith(("event: turn", "data: ")) for frame in text.split("\n\n")
               if frame.startswith("event: turn") for line in frame.splitlines())  # no id:
    for frame in (f for f in frames if f["event"] == "turn" and "id" in f):
        assert int(frame["id"]) == json.loads(frame["data"])["version"]  # the parser's id
    assert len(listener.batches()) == len(seen)  # an append's frames are sent in one write
    assert all(batch.count("event: turn") == 1 for batch in listener.batches())
    assert all(batch.endswith("\n\n") and batch.rstrip().rsplit("\n\n", 1)[-1]
               .startswith("event: turn") for batch in listener.batches())


def test_resuming_at_a_turn_frames_last_event_id_sends_nothing_twice(app, client):
    game_id, tokens = create(client, seats=2, seed=22)
    listener = Listener(app, f"/v1/games/{game_id}/stream")  # from the start of the log
    first = listener.wait_for_turns(1)[0]
    frames = stream_frames(listener.stop())
    assert frames[-1]["event"] == "turn" and frames[-1]["id"] == str(first["version"])
    again = Listener(app, f"/v1/games/{game_id}/stream", {"Last-Event-ID": frames[-1]["id"]})
    assert again.wait_for_turns(1) == [first]
    resumed = assert_fits_stream(again.stop())
    assert [f["event"] for f in resumed] == ["turn"]  # no event twice


def test_the_end_of_the_match_is_followed_by_a_finished_turn_frame(app, client):
    game_id, tokens = create(client, seats=2, seed=23, ai={0: "random", 1: "random"})
    listener = Listener(app, f"/v1/games/{game_id}/stream?after=1")
    games = client.application.extensions["spinner"].games
    while (now := standing(client, game_id))["status"] == "playing":
        assert games.ai_turn(game_id, now["version"], first_legal)
    assert listener.done.wait(20)  # closed after game_ended and its turn frame
    frames = assert_fits_stream(listener.text)
    assert [f["event"] for f in frames[-2:]] == ["game_ended", "turn"]
    assert json.loads(frames[-1]["data"]) == {**now, "turn": None, "status": "finished"}
    rest = Listener(app, f"/v1/games/{game_id}/stream?after={now['version'] - 1}")
    assert rest.done.wait(20)  # the rest of a finished log, then the same turn frame
    assert [f["event"] for f in assert_fits_stream(rest.text)] == ["game_ended", "turn"]


# Stream tickets ----------------------------------------------------------------------------

def dealt_hands(text: str) -> list[Any] | None:
    """The dealt hands of the hand_started frame a stream sent (None: none shown)."""
    frame = next(f for f in stream_frames(text) if f["event"] == "hand_started")
    hands: list[Any] | None = json.loads(frame["data"])["data"].get("hands")
    return hands


def test_a_ticket_follows_the_seats_redacted_stream_without_a_header(app, client):
    game_id, tokens = create(client, seats=2, seed=24)
    before = datetime.now(UTC)
    answer = client.post(f"/v1/games/{game_id}/stream-tickets", headers=auth(tokens[1]))
    expires = datetime.fromisoformat(answer.json["expires_at"])
    assert 55 <= (expires - before).total_seconds() <= 65  # STREAM_TICKET_TTL_S: 60 s
    ticket = answer.json["ticket"]
    assert tokens[1] not in ticket and game_id not in ticket
    as_seat = Listener(app, f"/v1/games/{game_id}/stream?ticket={ticket}")
    as_seat.wait_for_turns(1)
    hands = dealt_hands(as_seat.stop())
    assert hands is not None and hands[1] and hands[0] is None  # its own tiles only (R25)
    spectator = Listener(app, f"/v1/games/{game_id}/stream")
    spectator.wait_for_turns(1)
    assert dealt_hands(spectator.stop()) is None
    again = Listener(app, f"/v1/games/{game_id}/stream?ticket={ticket}")  # a reconnection
    again.wait_for_turns(1)
    assert again.status == 200 and dealt_hands(again.stop()) == hands


def test_a_ticket_opens_no_other_games_stream_and_makes_no_move(app, client, redis_client):
    game_id, tokens = create(client, seats=2, seed=25)
    other_id, _ = create(client, seats=2, seed=26)
    ticket = ticket_for(client, game_id, tokens[0])
    refused = client.get(f"/v1/games/{other_id}/stream?ticket={ticket}")
    assert refused.status_code == 401 and ticket not in refused.text
    move = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json["legal_moves"]
    assert client.post(f"/v1/games/{game_id}/moves?ticket={ticket}",
                       json=move[0] if move else {"action": "draw"}).status_code == 401
    assert client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                       headers=auth(ticket)).status_code == 401
    assert client.get(f"/v1/games/{game_id}", headers=auth(ticket)).status_code == 401
    assert "hand" not in client.get(f"/v1/games/{game_id}?ticket={ticket}").json  # unread
    assert client.post(f"/v1/games/{game_id}/stream-tickets").status_code == 401
    assert client.post(f"/v1/games/{other_id}/stream-tickets",
                       headers=auth(tokens[0])).status_code == 403
    stored = [key.decode() for key in redis_client.keys("*ticket*")]
    assert len(stored) == 1 and ticket not in stored[0]  # kept hashed, with an expiry
    assert 0 < redis_client.pttl(stored[0]) <= 60_000
    assert ticket.encode() not in redis_client.get(stored[0])


def test_a_ticket_stops_opening_the_stream_once_it_expires(redis_url, redis_client):
    app = create_app({"TESTING": True}, services=build(Settings(
        redis_url=redis_url, stream_ticket_ttl_s=0.3, stream_keepalive_s=0.05)))
    client = ContractClient(app.test_client())
    game_id, tokens = create(client, seats=2, seed=27)
    ticket = ticket_for(client, game_id, tokens[0])
    opened = Listener(app, f"/v1/games/{game_id}/stream?ticket={ticket}")
    opened.wait_for_turns(1)
    time.sleep(0.4)
    assert client.get(f"/v1/games/{game_id}/stream?ticket={ticket}").status_code == 401
    assert not opened.done.is_set()  # a stream opened in time runs on
    opened.stop()


def test_a_ticket_counts_in_its_seat_tokens_rate_limit_window(redis_url, redis_client):
    app = create_app({"TESTING": True}, services=build(Settings(
        redis_url=redis_url, rate_limit_per_token=3, rate_limit_per_address=0,
        stream_keepalive_s=0.05)))
    client = ContractClient(app.test_client())
    game_id, tokens = create(client, seats=2, seed=28)
    fresh_window()
    ticket = ticket_for(client, game_id, tokens[0])  # 1
    first = Listener(app, f"/v1/games/{game_id}/stream?ticket={ticket}")  # 2
    first.wait_for_turns(1)
    first.stop()
    assert client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200  # 3
    over = client.get(f"/v1/games/{game_id}/stream?ticket={ticket}")
    assert over.status_code == 429 and "per token" in over.json["detail"]
    assert client.get(f"/v1/games/{game_id}/stream?ticket={ticket}x").status_code == 401


# State frames: one request a move (issue 21) ---------------------------------------------

def state_frames(listener: Listener) -> list[dict[str, Any]]:
    """The data of every `state` frame a listener got so far."""
    return [json.loads(f["data"]) for f in stream_frames(listener.text)
            if f["event"] == "state"]


def newest_state(listener: Listener, version: int) -> dict[str, Any]:
    """Wait for the listener's state frame at `version` or later; return the newest."""
    assert wait_until(lambda: any(s["version"] >= version for s in state_frames(listener)), 20)
    return state_frames(listener)[-1]


def test_a_seat_plays_a_whole_game_with_posts_only_on_its_streams_state_frames(app, client):
    """Each seat follows its stream with ?state=true and moves on what its state frames say:
    one POST a move, no GET, until the match ends; each turn frame is followed by a state
    frame at its version."""
    game_id, tokens = create(client, seats=2, seed=31)
    seats = {s: Listener(app, f"/v1/games/{game_id}/stream?state=true", auth(tokens[s]))
             for s in (0, 1)}
    version, posts = 1, 0
    while True:
        states = {s: newest_state(listener, version) for s, listener in seats.items()}
        if states[0]["status"] == "finished":
            break
        mover = states[0]["turn"]
        state = states[mover]
        answer = client.post(f"/v1/games/{game_id}/moves", json=state["legal_moves"][0],
                             headers={**auth(tokens[mover]), "If-Match": f'"{state["version"]}"'})
        assert answer.status_code == 200, answer.json
        version, posts = answer.json["version"], posts + 1
    assert all(listener.done.wait(20) for listener in seats.values())  # closed at the end
    assert posts > 20 and states[1]["status"] == "finished"
    for listener in seats.values():
        frames = assert_fits_stream(listener.text)
        kinds = [f["event"] for f in frames if f["event"] in ("turn", "state")]
        assert kinds == ["turn", "state"] * (len(kinds) // 2)  # a state after each turn
        turns = [json.loads(f["data"]) for f in frames if f["event"] == "turn"]
        assert [t["version"] for t in turns] == [s["version"] for s in state_frames(listener)]
        batches = listener.batches()  # one write an append: its events, turn and state
        assert len(batches) == len(turns)
        assert all(b.count("event: turn") == b.count("event: state") == 1 for b in batches)
        assert all(b.rstrip().rsplit("\n\n", 1)[-1].startswith("event: state")
                   for b in batches)


def test_each_state_frame_is_the_callers_get_state_at_its_version_and_hides_other_hands(
        app, client):
    """R25: a state frame is what `GET /state?version=N` answers the same caller; a seat's
    shows its own tiles only, a spectator's none, and no frame names another seat's hand."""
    game_id, tokens = create(client, seats=2, seed=32)
    callers: dict[int | None, dict[str, str]] = {None: {}, 0: auth(tokens[0]),
                                                 1: auth(tokens[1])}
    listeners = {s: Listener(app, f"/v1/games/{game_id}/stream?state=1", headers)
                 for s, headers in callers.items()}
    created = client.get(f"/v1/games/{game_id}").json["version"]
    for listener in listeners.values():  # each has its first frame before any move
        newest_state(listener, created)
    for _ in range(8):
        state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
        mover = state["turn"]
        mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[mover])).json
        assert client.post(f"/v1/games/{game_id}/moves", json=mine["legal_moves"][0],
                           headers=auth(tokens[mover])).status_code == 200
    version = client.get(f"/v1/games/{game_id}").json["version"]
    frames = {s: newest_state(listener, version) and state_frames(listener)
              for s, listener in listeners.items()}
    for listener in listeners.values():
        listener.stop()
    for seat, states in frames.items():
        assert len(states) >= 2 and states[-1]["version"] == version  # after each batch
        for state in states:
            at = client.get(f"/v1/games/{game_id}/state?version={state['version']}",
                            headers=callers[seat])
            assert state == at.json
    assert all({"seat", "hand", "legal_moves"}.isdisjoint(s) for s in frames[None])
    ours, theirs = ({s["version"]: s for s in frames[seat]} for seat in (0, 1))
    both = sorted(ours.keys() & theirs.keys())  # each stream batches the appends its own way
    assert both and both[-1] == version
    for at in both:
        assert (ours[at]["seat"], theirs[at]["seat"]) == (0, 1)
        assert not set(ours[at]["hand"]) & set(theirs[at]["hand"])  # neither sees the other's
        assert ours[at]["legal_moves"] == [] or theirs[at]["legal_moves"] == []


def test_a_stream_asks_for_state_frames_with_true_or_false_only(app, client):
    game_id, tokens = create(client, seats=2, seed=33)
    refused = client.get(f"/v1/games/{game_id}/stream?state=yes", headers=auth(tokens[0]))
    assert refused.status_code == 400 and refused.json["errors"][0]["field"] == "state"
    plain = Listener(app, f"/v1/games/{game_id}/stream?state=false", auth(tokens[0]))
    plain.wait_for_turns(1)
    assert "event: state" not in plain.stop()  # as without the parameter


def test_streams_are_capped_by_client_and_by_process_and_a_closed_one_frees_its_place(
        redis_url, redis_client):
    """A process holds at most MAX_STREAMS streams and a client (an API key's, else an
    address's) STREAMS_PER_CLIENT of them: many held open cannot take every connection."""
    key = "k3y-0f-a-back-end"
    settings = Settings(redis_url=redis_url, api_keys=f"backend:{sha256(key)}", max_streams=3,
                        streams_per_client=2, stream_keepalive_s=0.2,
                        rate_limit_per_token=0, rate_limit_per_address=0)
    app = create_app({"TESTING": True}, services=build(settings))
    client = ContractClient(app.test_client())
    game_id, tokens = create(client, seats=2, seed=5)
    path = f"/v1/games/{game_id}/stream"
    held = [Listener(app, path), Listener(app, path, auth(tokens[0]))]  # one address's two
    for listener in held:
        listener.wait_for_turns(1)
    refused = client.get(path, headers=auth(tokens[1]))  # a token is no other client
    assert (refused.status_code, refused.json["type"]) == (429, "/problems/too-many-streams")
    assert refused.headers["Retry-After"] == "5"
    held.append(Listener(app, path, {"X-Api-Key": key}))  # another client: the third
    held[-1].wait_for_turns(1)
    full = client.get(path, headers={"X-Api-Key": key})
    assert (full.status_code, full.json["type"]) == (503, "/problems/streams-full")
    held.pop(0).stop()  # its place is free once it closes
    again = Listener(app, path)
    again.wait_for_turns(1)
    assert again.status == 200 and [listener.status for listener in held] == [200, 200]
    for listener in [*held, again]:
        listener.stop()
