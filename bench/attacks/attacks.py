"""The attacks of issue 17, each retried against a running service; each returns a finding."""

from __future__ import annotations

import random
import socket
import statistics
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import redis

from bench.attacks.http import Client, Reply
from service.rules.opening import tiles_per_hand
from service.rules.tiles import TILES


@dataclass
class Finding:
    """What an attack tried and what it got."""

    attack: str
    got: str


def humans(n: int) -> list[dict[str, str]]:
    """Return `n` human players."""
    return [{"name": f"P{s}", "kind": "human"} for s in range(n)]


def create(client: Client, players: list[dict[str, str]], hands: int = 1,
           seed: int | None = None, headers: dict[str, str] | None = None) -> Reply:
    """POST a creation."""
    body: dict[str, object] = {"players": players, "rules": {"hands": hands, "opening": "draw"}}
    if seed is not None:
        body["seed"] = seed
    return client.call("POST", "/v1/games", body, headers)


def bearer(token: str) -> dict[str, str]:
    """Return a seat's Authorization header."""
    return {"Authorization": f"Bearer {token}"}


def dealt(client: Client, game_id: str, token: str) -> tuple[int, list[str], dict]:
    """Return the first hand's number, seat 0's dealt tiles and hand_started as seat 0 sees it."""
    log = client.call("GET", f"/v1/games/{game_id}/events", headers=bearer(token)).body
    started = next(e for e in log["events"] if e["type"] == "hand_started")
    return started["data"]["hand_number"], started["data"]["hands"][0], started


def old_seed_of(number: int, hand: list[str], seats: int, tries: int) -> int | None:
    """Search seeds as the attacker did: the old `random.Random(f"{seed}:{hand}")` decks."""
    k, wanted = tiles_per_hand(seats), sorted(hand)
    for seed in range(tries):
        deck = list(TILES)
        random.Random(f"{seed}:{number}").shuffle(deck)
        if sorted(t.text for t in deck[:k]) == wanted:
            return seed
    return None


def seeded_deal(client: Client) -> Finding:
    """Two games with the README's old `seed: 42`: same deal? is the seed found from a hand?"""
    games = [create(client, humans(2), seed=42).body for _ in range(2)]
    seen = [dealt(client, g["game_id"], g["seats"][0]["token"]) for g in games]
    same = seen[0][1] == seen[1][1]
    found = old_seed_of(seen[0][0], seen[0][1], 2, 20000)
    data = seen[0][2]["data"]
    public = next(e for e in client.call("GET", f"/v1/games/{games[0]['game_id']}/events")
                  .body["events"] if e["type"] == "hand_started")
    return Finding(
        "two games created with `seed: 42`; seat 0 searches seeds 0-19,999 of the old deck "
        "formula for its dealt hand",
        f"the two deals {'are the same' if same else 'differ'}; seed "
        f"{'found: ' + str(found) if found is not None else 'not found'}; hand_started shows "
        f"seat 0 commitment={'commitment' in data}, deck={'deck' in data}, salt={'salt' in data};"
        f" a spectator: commitment={'commitment' in public['data']}, "
        f"deck={'deck' in public['data']}")


def slow_bodies(port: int, client: Client, count: int = 1000) -> Finding:
    """Hold `count` half-sent POST bodies; time /healthz meanwhile and the server's close."""
    head = (b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 60000\r\n\r\n{\"players\":")
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(head)
        sockets.append(s)
    health = client.call("GET", "/healthz", timeout=60)
    started = time.monotonic()
    closed, answers = 0, Counter()
    for s in sockets:
        s.settimeout(max(0.1, 60 - (time.monotonic() - started)))
        try:
            first = s.recv(64)
            answers[first.split(b" ")[1].decode() if first else "EOF"] += 1
            closed += 1
        except OSError:
            answers["still open at 60 s"] += 1
        s.close()
    waited = time.monotonic() - started
    return Finding(
        f"{count} connections each send `Content-Length: 60000` and 11 bytes, and stop",
        f"/healthz meanwhile: {health.status} in {health.ms:.0f} ms; {closed} of {count} closed "
        f"by the server within {waited:.1f} s ({dict(answers)})")


def human_against(client: Client, level: str) -> tuple[str, str]:
    """Create a 10-hand game of a human (seat 0) against an AI of `level`; return its id and
    the human's token."""
    made = create(client, [{"name": "H", "kind": "human"},
                           {"name": "AI", "kind": "ai", "level": level}], hands=10).body
    return made["game_id"], made["seats"][0]["token"]


def ai_reply_ms(client: Client, rounds: int) -> list[float]:
    """Play a human against a greedy AI; return ms from each of its moves to the AI's reply."""
    game_id, token = human_against(client, "greedy")
    times: list[float] = []
    while len(times) < rounds:
        state = client.call("GET", f"/v1/games/{game_id}", headers=bearer(token)).body
        if state["status"] != "playing":
            break
        if state["turn"] != 0:
            time.sleep(0.005)
            continue
        answer = client.call("POST", f"/v1/games/{game_id}/moves", state["legal_moves"][0],
                             bearer(token))
        sent = time.perf_counter()
        state = answer.body
        while state["status"] == "playing" and state["turn"] != 0:
            time.sleep(0.002)
            state = client.call("GET", f"/v1/games/{game_id}").body
        times.append((time.perf_counter() - sent) * 1000)
    return times


def ai_flood(client: Client, anonymous: Client) -> Finding:
    """30 anonymous creations of 8 experts x 10 hands, then another game's AI reply times."""
    quiet = statistics.median(ai_reply_ms(client, 20))
    experts = [{"name": f"E{s}", "kind": "ai", "level": "expert"} for s in range(8)]
    statuses = Counter(create(anonymous, experts, hands=10).status for _ in range(30))
    flooded = statistics.median(ai_reply_ms(client, 20))
    return Finding(
        "30 anonymous creations of 8 `expert` seats and 10 hands, from one address; another "
        "game's greedy AI reply time (median of 20)",
        f"creations answered {dict(statuses)}; the other game's reply p50 {quiet:.0f} ms before,"
        f" {flooded:.0f} ms during the flood")


def game_bytes(store, game_id: str) -> int:
    """Return the Redis memory of every key of one game (its hash tag)."""
    keys = list(store.scan_iter(match=f"*{{{game_id}}}*", count=1000))
    return sum(store.memory_usage(key, samples=0) or 0 for key in keys)


def play_out(client: Client, game_id: str, tokens: list[str]) -> dict:
    """Play the first legal move of whichever seat is to move until the match ends."""
    state = client.call("GET", f"/v1/games/{game_id}").body
    while state["status"] == "playing":
        token = tokens[state["turn"]]
        mine = client.call("GET", f"/v1/games/{game_id}", headers=bearer(token)).body
        state = client.call("POST", f"/v1/games/{game_id}/moves", mine["legal_moves"][0],
                            bearer(token)).body
    return state


def storage(client: Client, store) -> Finding:
    """Bytes of a bare creation and of a finished 2-seat 10-hand game."""
    bare = create(client, humans(2), hands=10).body
    made = create(client, humans(2), hands=10).body
    play_out(client, made["game_id"], [s["token"] for s in made["seats"]])
    time.sleep(1)  # a compaction done after the answer has landed by now
    ttl = store.ttl(f"game:{{{bare['game_id']}}}:meta")
    return Finding(
        "the Redis footprint of a bare creation and of a finished 2-seat 10-hand game",
        f"bare creation {game_bytes(store, bare['game_id']) / 1024:.1f} KB (expires in "
        f"{ttl} s); finished game {game_bytes(store, made['game_id']) / 1024:.1f} KB")


def fill(store) -> None:
    """Write ever smaller values until Redis refuses even the smallest (a big value's own
    query buffer counts against `maxmemory`, so its refusal alone does not mean full)."""
    filler = 0
    for size in (65536, 1024, 16):
        while True:
            try:
                store.set(f"filler:{filler}", "x" * size)
            except redis.exceptions.OutOfMemoryError:
                break
            filler += 1


def full_store(client: Client, store) -> Finding:
    """Fill Redis to `maxmemory`; what do writes, reads and /healthz answer?"""
    made = create(client, humans(2)).body
    game_id, tokens = made["game_id"], [s["token"] for s in made["seats"]]
    turn = client.call("GET", f"/v1/games/{game_id}").body["turn"]
    state = client.call("GET", f"/v1/games/{game_id}", headers=bearer(tokens[turn])).body
    used = int(store.info("memory")["used_memory"])
    store.config_set("maxmemory", str(used + 2 * 1024 * 1024))
    try:
        fill(store)
        got = {
            "creation": create(client, humans(2)).status,
            "move": client.call("POST", f"/v1/games/{game_id}/moves", state["legal_moves"][0],
                                bearer(tokens[state["seat"]])),
            "state": client.call("GET", f"/v1/games/{game_id}").status,
            "events": client.call("GET", f"/v1/games/{game_id}/events").status,
            "healthz": client.call("GET", "/healthz"),
        }
    finally:
        for key in store.scan_iter(match="filler:*", count=1000):
            store.delete(key)
        store.config_set("maxmemory", "0")
    move, health = got["move"], got["healthz"]
    return Finding(
        "Redis at `maxmemory` (noeviction): a creation, a move, two reads and /healthz",
        f"creation {got['creation']}; move {move.status} "
        f"({move.body.get('detail') if isinstance(move.body, dict) else move.body}); "
        f"state {got['state']}; events {got['events']}; /healthz {health.status} "
        f"({health.body.get('detail') if isinstance(health.body, dict) else health.body})")



def expert_timing(client: Client, turns: int = 30) -> Finding:
    """From the public log's `at` times: how long after its turn began each expert move came."""
    game_id, token = human_against(client, "expert")
    gaps: list[float] = []
    while len(gaps) < turns:
        state = client.call("GET", f"/v1/games/{game_id}", headers=bearer(token)).body
        if state["status"] != "playing":
            break
        if state["turn"] == 0:
            client.call("POST", f"/v1/games/{game_id}/moves", state["legal_moves"][0],
                        bearer(token))
            continue
        time.sleep(0.05)
        gaps = ai_gaps(client.call("GET", f"/v1/games/{game_id}/events").body["events"])
    fast = sum(gap < 150 for gap in gaps)
    return Finding(
        f"{len(gaps)} expert turns timed from the public log's `at` (ms from the event before "
        "to the AI's move; a 150 ms threshold told 30 of 30 apart)",
        f"min {min(gaps):.0f}, median {statistics.median(gaps):.0f}, max {max(gaps):.0f} ms; "
        f"{fast} under 150 ms")


def ai_gaps(events: list[dict]) -> list[float]:
    """Return ms from each human event to the AI move that follows it (seat 1 is the AI)."""
    def at(event: dict) -> float:
        return datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp() * 1000

    return [at(b) - at(a) for a, b in zip(events, events[1:], strict=False)
            if a.get("seat") == 0 and b.get("seat") == 1
            and b["type"] in ("tile_played", "tile_drawn", "passed")
            and b["data"].get("reason") != "search"]


def burst(client: Client, count: int, headers: dict[str, str]) -> Counter:
    """Send `count` GETs of /v1/games/none at once (8 threads); count the statuses."""
    with ThreadPoolExecutor(8) as pool:
        return Counter(pool.map(
            lambda _: client.call("GET", "/v1/games/none", headers=headers).status, range(count)))


def quotas(client: Client, api_key: str) -> Finding:
    """A keyed back end and an anonymous flood, from one address, in one minute."""
    keyed = burst(client, 1500, {"X-Api-Key": api_key})
    anonymous = burst(client, 1500, {})
    keyed_after = burst(client, 200, {"X-Api-Key": api_key})
    return Finding(
        "from one address in one minute: 1,500 requests of a back end with an API key, 1,500 "
        "anonymous ones, then 200 more of the back end",
        f"keyed {dict(keyed)}; anonymous {dict(anonymous)}; keyed after {dict(keyed_after)}")


def smaller(client: Client) -> Finding:
    """text/plain bodies, duplicate keys, a finished game's stream, many idempotency keys."""
    plain = client.call("POST", "/v1/games", raw=b'{"players": []}',
                        headers={"Content-Type": "text/plain"}).status
    twice = client.call("POST", "/v1/games", raw=b'{"players": [], "players": []}',
                        headers={"Content-Type": "application/json"}).status
    made = create(client, humans(2)).body
    game_id, tokens = made["game_id"], [s["token"] for s in made["seats"]]
    final = play_out(client, game_id, tokens)["version"]
    stream = client.call("GET", f"/v1/games/{game_id}/stream",
                         headers={"Last-Event-ID": str(final)}).status
    other = create(client, humans(2)).body
    token = other["seats"][0]["token"]
    keys = Counter(client.call(
        "POST", f"/v1/games/{other['game_id']}/moves", {"action": "pass"},
        {**bearer(token), "Idempotency-Key": f"{n:0>255}"}).status for n in range(2100))
    return Finding(
        "a text/plain creation; duplicate JSON keys; a finished game's /stream resumed at its "
        "last version (a browser's reconnect); 2,100 moves "
        "of one seat with distinct 255-character Idempotency-Keys",
        f"text/plain {plain}; duplicate keys {twice}; finished stream {stream}; "
        f"idempotency keys {dict(keys)}")
