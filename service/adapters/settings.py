"""Settings from the environment, with defaults that run out of the box."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from service.usecases.ports import (
    IDEMPOTENCY_KEYS_PER_SEAT,
    IDEMPOTENCY_TTL_S,
    UNPLAYED_GAME_TTL_S,
)


@dataclass(frozen=True)
class Settings:
    """Every knob of the service; each field is read from `SPINNER_<NAME>` or its plain name."""

    redis_url: str = ""  # empty: `spinner serve` starts its own redis-server
    queue_redis_url: str = ""  # empty: the queue shares the store's Redis
    ai_budget_s: float = 0.3  # an `expert` AI's move reaches the log this long after its
    # turn began, whatever the position; it searches for most of it
    ai_min_delay_s: float = 0.05  # the other levels' moves: no sooner than this after their
    # turn began, so no move's time tells anything of the hand
    ai_job_timeout_s: int = 60
    ai_job_retries: int = 3
    ai_stuck_after_s: float = 10.0  # an AI turn's job taken, started or due this long ago
    # and not done (its worker or rq's scheduler died) is presumed lost and queued again
    ai_sweep_every_s: float = 2.0  # how often a worker queues lost AI turns again, a drain of
    # the notifications whose retry is due, and starts rq's scheduler again if it died
    ai_games_per_client: int = 4  # open games with AI seats an anonymous client (an
    # address) may have; past it, creating one more gets 429
    ai_games_per_key: int = 500  # the same for a back end with an API key
    ai_turns_per_client: int = 4  # AI turns of an anonymous client's games queued at once;
    # more wait (deferred), queued as its earlier ones are done
    ai_turns_per_key: int = 50  # the same for a back end with an API key
    ai_idle_game_s: float = 3600.0  # a game with no event for this long no longer counts
    # among its client's open AI games
    ai_expert_calm_queue: int = 1  # expert turns waiting in the queue at which an expert
    # still searches its whole budget; with more waiting it searches a share of it
    turn_seconds_min: int = 10  # the shortest `rules.turn_seconds` a creation may ask for;
    # API.md says 10: tests alone lower it, to run clocks out fast
    stream_keepalive_s: float = 15.0
    stream_ticket_ttl_s: float = 60.0  # a stream ticket opens its game's stream this long
    max_streams: int = 750  # streams an API process holds open at once, of its 1,000
    # connections: the rest stay free for every other request (0: no cap)
    streams_per_client: int = 500  # streams one client (an API key, else an address) holds
    # open on one API process (0: no cap)
    max_body_bytes: int = 64 * 1024
    gzip_min_bytes: int = 1024  # answers this long or longer are gzipped for clients that
    # take gzip; 0 turns compression off
    body_read_timeout_s: float = 5.0  # a request's body must arrive whole this long after its
    # first read, else 408 and the connection is closed (slow clients cannot hold the service)
    rate_limit_per_token: int = 600  # requests a minute; 0 turns the limit off
    rate_limit_per_address: int = 1200  # anonymous requests: no API key, no seat token
    api_keys: str = ""  # back ends' keys (X-Api-Key): `name:sha256hex[:requests_per_minute]`,
    # comma-separated; the hex SHA-256 of each key, never the key
    rate_limit_per_key: int = 60_000  # requests a minute per API key that names no quota:
    # 500 concurrent games x 2 requests a second (a move and a poll) x 60 seconds
    cors_origins: str = ""  # comma-separated origins; empty: CORS off
    idempotency_ttl_s: int = IDEMPOTENCY_TTL_S
    idempotency_keys_per_seat: int = IDEMPOTENCY_KEYS_PER_SEAT  # live keys a seat may hold;
    # a new key past them gets 429 until the oldest expires (0: no cap)
    metrics_allowed: str = ""  # comma-separated addresses or networks (CIDR) that may read
    # /metrics; with metrics_token, either lets a request in; both empty: /metrics is open
    metrics_token: str = ""  # a bearer token that may read /metrics
    unplayed_game_ttl_s: float = float(UNPLAYED_GAME_TTL_S)  # a game no client has moved in
    # is forgotten this long after its creation (0: kept for good)
    seeded_games: bool = False  # honour a creation's `seed` (reproducible games, for tests);
    # off: a seed is ignored and every deck comes from the system's CSPRNG
    deck_secret: str = ""  # the server secret seeded decks are derived from; empty: one made
    # once at random and kept in the store's Redis, shared by every process
    webhooks_allow_private: bool = False  # let games' notify URLs be `http` and loopback,
    # private or link-local addresses (local use and tests); off: https to public ones only
    webhook_retry_s: str = "5,30,120,600,1800"  # seconds before each retry of a notification
    # not delivered (comma-separated integers): 6 tries over 42.5 minutes

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read settings from `environ` (default: os.environ), e.g. REDIS_URL, AI_BUDGET_S."""
        env = os.environ if environ is None else environ
        values = {}
        for field in fields(cls):
            name = field.name.upper()
            raw = env.get(f"SPINNER_{name}", env.get(name))
            if raw is not None:
                values[field.name] = _parse(raw, type(field.default))
        return cls(**values)


FLAGS = {"1": True, "true": True, "yes": True, "on": True,
         "0": False, "false": False, "no": False, "off": False, "": False}
"""How a boolean setting may be spelled (case aside)."""


def _parse(raw: str, kind: type) -> object:
    """Return a setting's text as its field's type; a boolean from FLAGS (bool("0") is True)."""
    if kind is not bool:
        return kind(raw)
    try:
        return FLAGS[raw.strip().lower()]
    except KeyError:
        raise ValueError(f"{raw!r} is not a boolean: say 1/0, true/false, yes/no or on/off") \
            from None
