"""The log: /events paging, /state?version=N, /export, /stream, /healthz and `spinner verify`."""

from __future__ import annotations

import hashlib
import json
import random
import threading

import orjson
import pytest

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from service.entrypoints.redis_server import free_port
from service.game.events import GENESIS, event_hash
from tests.api.contract import check_response, stream_frames
from tests.api.driver import auth, create, play_to_end


def test_events_page_with_after_and_hide_hashes_while_playing(client):
    game_id, tokens = create(client, seats=3, seed=5)
    everything = client.get(f"/v1/games/{game_id}/events").json["events"]
    assert [e["seq"] for e in everything] == list(range(1, len(everything) + 1))
    assert everything[0]["type"] == "game_created" and everything[1]["type"] == "hand_started"
    page = client.get(f"/v1/games/{game_id}/events?after=1").json["events"]
    assert page == everything[1:]
    assert all("hash" not in e for e in everything)
    assert client.get(f"/v1/games/{game_id}/events?after=-1").status_code == 400


def test_state_at_a_version_is_rebuilt_by_replay(client):
    game_id, tokens = create(client, seats=2, seed=9)
    start = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
    play_to_end(client, game_id, tokens, random.Random(9))
    then = client.get(f"/v1/games/{game_id}/state?version={start['version']}",
                      headers=auth(tokens[0]))
    assert then.status_code == 200
    assert then.json == start
    assert then.headers["ETag"] == f'"{start["version"]}"'
    assert client.get(f"/v1/games/{game_id}/state?version=999999").status_code == 404
    assert client.get(f"/v1/games/{game_id}/state").status_code == 400


def test_a_version_beyond_the_log_is_404_naming_no_number_but_the_logs_range(client):
    game_id, _ = create(client, seats=2, seed=9)
    current = client.get(f"/v1/games/{game_id}").json["version"]
    for sent in (str(current + 1), "1" + "0" * 30):  # the last beyond any int64
        beyond = client.get(f"/v1/games/{game_id}/state?version={sent}")
        assert beyond.status_code == 404
        assert beyond.json["detail"] == f"no such version: this game's are 1..{current}"


def test_R24_export_is_409_until_the_match_ends_then_it_verifies(client, tmp_path, capsys):
    game_id, tokens = create(client, seats=2, hands=2, seed=11)
    assert client.get(f"/v1/games/{game_id}/export").status_code == 409
    final = play_to_end(client, game_id, tokens, random.Random(11))
    assert final["status"] == "finished" and final["turn"] is None
    assert len(final["scores"]) == 2 and final["winners"]
    seat = next(iter(tokens))
    late = client.post(f"/v1/games/{game_id}/moves", json={"action": "pass"},
                       headers=auth(tokens[seat]))
    assert late.status_code == 409 and late.json["rule"] == "R24"
    export = client.get(f"/v1/games/{game_id}/export").json
    assert export["game_id"] == game_id
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 0


def test_verify_names_the_first_tampered_event(client, tmp_path, capsys):
    game_id, tokens = create(client, seats=2, hands=1, seed=12)
    play_to_end(client, game_id, tokens, random.Random(12))
    export = client.get(f"/v1/games/{game_id}/export").json
    played = next(e for e in export["events"] if e["type"] == "tile_played" and e["seq"] > 5)
    played["data"]["tile"] = "S-S" if played["data"]["tile"] != "S-S" else "0-0"
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 1
    assert f"event {played['seq']}" in capsys.readouterr().err
    prev = GENESIS  # a forger who also rewrites the hash chain is caught by the replay
    for event in export["events"]:
        event["hash"] = prev = event_hash(prev, event)
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 1
    assert f"event {played['seq']}" in capsys.readouterr().err


def test_export_hash_chain_follows_api_md(client):
    game_id, tokens = create(client, seats=2, hands=1, seed=13)
    play_to_end(client, game_id, tokens, random.Random(13))
    events = client.get(f"/v1/games/{game_id}/export").json["events"]
    prev = GENESIS
    for event in events:
        body = {k: v for k, v in event.items() if k != "hash"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert event["hash"] == hashlib.sha256((prev + canonical).encode()).hexdigest()
        prev = event["hash"]


def test_stream_sends_ids_and_resumes_after_last_event_id(app, client):
    game_id, tokens = create(client, seats=2, seed=14)
    version = client.get(f"/v1/games/{game_id}").json["version"]
    lines: list[str] = []

    def listen() -> None:
        with app.test_client() as raw:
            answer = raw.get(f"/v1/games/{game_id}/stream", headers={"Last-Event-ID": "1"},
                             buffered=False)
            assert answer.mimetype == "text/event-stream"
            for chunk in answer.response:
                lines.extend(chunk.decode().splitlines())
                if sum(1 for line in lines if line.startswith("id: ")) >= version:
                    break
            answer.close()

    listener = threading.Thread(target=listen)
    listener.start()
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[turn])).json
    client.post(f"/v1/games/{game_id}/moves", json=mine["legal_moves"][0],
                headers=auth(tokens[turn]))
    listener.join(timeout=20)
    ids = [int(line[4:]) for line in lines if line.startswith("id: ")]
    assert ids == list(range(2, version + 2))
    assert not any('"deck"' in line for line in lines)


@pytest.mark.parametrize("beyond", [0, 10**6], ids=["resumed at the end", "id beyond the log"])
def test_the_stream_sends_the_append_that_ends_the_match_whole(app, client, beyond):
    game_id, tokens = create(client, seats=2, hands=1, seed=16)
    start = client.get(f"/v1/games/{game_id}").json["version"]
    lines: list[str] = []
    resume = {"Last-Event-ID": str(start + beyond)}  # beyond: the stream starts at the end
    opened = threading.Event()

    def listen() -> None:
        with app.test_client() as raw:
            answer = raw.get(f"/v1/games/{game_id}/stream", headers=resume, buffered=False)
            for chunk in answer.response:  # the stream closes after game_ended
                lines.extend(chunk.decode().splitlines())
                opened.set()
            answer.close()

    listener = threading.Thread(target=listen)
    listener.start()
    assert opened.wait(20)  # the stream has read where it starts before anyone moves
    play_to_end(client, game_id, tokens, random.Random(16))
    listener.join(timeout=60)
    assert not listener.is_alive()  # closed after game_ended
    frames = [f for f in stream_frames("\n".join(lines) + "\n") if f["event"] != "turn"]
    sent = [json.loads(f["data"]) for f in frames]  # the events, not the turn frames
    export = client.get(f"/v1/games/{game_id}/export").json["events"]
    assert [e["seq"] for e in sent] == list(range(start + 1, len(export) + 1))
    whole = [e for e in sent if "hash" in e]
    assert sent[-1]["type"] == "game_ended" and whole == export[-len(whole):]
    assert 2 <= len(whole) < len(sent)  # the events before it went out redacted
    texts = [f["data"] for f in frames]
    assert texts[-len(whole):] == [orjson.dumps(e).decode() for e in whole]  # as /export has it


def test_healthz_is_200_when_the_store_answers(client):
    answer = client.get("/healthz")
    assert answer.status_code == 200 and answer.json["status"] == "ok"


def test_healthz_is_503_with_retry_after_as_documented_when_the_store_is_down():
    down = build(Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0"))
    answer = create_app({"TESTING": True}, services=down).test_client().get("/healthz")
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "1"
    check_response("GET", "/healthz", answer)


def test_stream_sends_keep_alive_comments_while_nothing_happens(redis_url, redis_client):
    services = build(Settings(redis_url=redis_url, stream_keepalive_s=0.2))
    app = create_app({"TESTING": True}, services=services)
    game_id, _ = create(app.test_client(), seats=2, seed=15)
    version = app.test_client().get(f"/v1/games/{game_id}").json["version"]
    with app.test_client() as raw:
        answer = raw.get(f"/v1/games/{game_id}/stream", headers={"Last-Event-ID": str(version)},
                         buffered=False)
        chunks = []
        for chunk in answer.response:
            chunks.append(chunk.decode())
            if sum(c.startswith(": keep-alive") for c in chunks) >= 2:
                break
        answer.close()
    assert not any(c.startswith("id: ") for c in chunks)  # nothing new: only keep-alives


def test_R18_R19_R20_no_move_is_offered_where_the_servers_own_event_comes_next(client):
    """A state rebuilt between a seat's event and the server's (a hand's last play or pass
    before hand_ended, the passes before obligation_lifted) offers no move; others do."""
    game_id, tokens = create(client, seats=2, hands=2, seed=31)
    play_to_end(client, game_id, tokens, random.Random(31))
    log = client.get(f"/v1/games/{game_id}/export").json["events"]
    next_is_servers = {e["seq"] - 1 for e in log if e["type"] in ("hand_ended",
                                                                 "obligation_lifted")}
    offered = {}
    for version in range(2, len(log)):
        turn = client.get(f"/v1/games/{game_id}/state?version={version}").json["turn"]
        after = log[version]  # the event that came next
        seats_own = after["seat"] is not None and after["data"].get("reason") != "search"
        if turn is not None and seats_own or version in next_is_servers:
            state = client.get(f"/v1/games/{game_id}/state?version={version}",
                               headers=auth(tokens[turn])).json
            offered[version] = bool(state["legal_moves"])
    assert next_is_servers and all(not offered[v] for v in next_is_servers)
    assert all(offered[v] for v in offered if v not in next_is_servers)
