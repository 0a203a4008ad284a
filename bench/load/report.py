"""The load bench's figures: what each phase measured, and the summary printed at the end."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bench.load.clients import Tally


@dataclass
class Phase:
    """One measured phase: what the clients saw, its wall time and the servers' CPU time."""

    tally: Tally
    seconds: float
    server_cpu_s: float
    redis_cpu_s: float = 0.0
    began: float = 0.0

    @property
    def per_s(self) -> float:
        """Requests per second."""
        return self.tally.requests / self.seconds

    @property
    def busy_seconds(self) -> float:
        """Seconds from the start until the first client thread found no game left to play:
        until then every client was busy, as in the ceiling's run."""
        return min(self.tally.drained_at, default=self.began + self.seconds) - self.began

    def busy_per_s(self, times: list[float]) -> float:
        """Answers per second among `times` while every client was busy."""
        end = self.began + self.busy_seconds
        return sum(1 for t in times if t <= end) / max(self.busy_seconds, 1e-9)

    def cpu_ms(self, cpu_s: float) -> float:
        """CPU milliseconds a request."""
        return 1000 * cpu_s / max(self.tally.requests, 1)


def percentile(values: list[float], fraction: float) -> float:
    """Return the nearest-rank percentile of `values` (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def ceiling_per_s(hellos: tuple[Phase, Phase]) -> float:
    """The ceiling's requests per second: the mean of its runs before and after the load."""
    return sum(h.per_s for h in hellos) / 2


def figures(game: Phase, hellos: tuple[Phase, Phase], verified: int,
            games: int) -> dict[str, Any]:
    """Return the summary's figures: the game load against the ceiling."""
    load = game.tally
    hello_rps = ceiling_per_s(hellos)
    hello_cpu_ms = sum(h.cpu_ms(h.server_cpu_s) for h in hellos) / 2
    busy_rps = game.busy_per_s(load.done_at)
    return {
        "moves_per_s": round(game.busy_per_s(load.moves_at), 1),
        "p50_ms": round(percentile(load.move_ms, .5), 2),
        "p99_ms": round(percentile(load.move_ms, .99), 2),
        "hello_req_per_s": round(hello_rps, 1),
        "ratio": round(busy_rps / hello_rps, 3),
        "errors": load.errors + sum(h.tally.errors for h in hellos),
        "verified_games": verified,
        "req_per_s": round(busy_rps, 1),
        "whole_run_moves_per_s": round(load.moves / game.seconds, 1),
        "whole_run_ratio": round(game.per_s / hello_rps, 3),
        "cpu_ratio": round(hello_cpu_ms / game.cpu_ms(game.server_cpu_s), 3),
        "games": games,
        "finished_games": len(load.finished),
    }


def notify_figures(legs: list[tuple[bool, Phase]]) -> dict[str, Any]:
    """Return and print the moves/s of the phases without and with notifications (each the
    mean of its phases, while every client was busy) and their ratio."""
    def mean(notified: bool) -> float:
        rates = [p.busy_per_s(p.tally.moves_at) for n, p in legs if n == notified]
        return sum(rates) / len(rates)

    without, notified = mean(False), mean(True)
    found = {"moves_per_s_without_notify": round(without, 1),
             "moves_per_s_with_notify": round(notified, 1),
             "notify_ratio": round(notified / without, 3),
             "notify_phases": [round(p.busy_per_s(p.tally.moves_at), 1) for _, p in legs]}
    print(f"notifications: {found['moves_per_s_with_notify']} moves/s with them, "
          f"{found['moves_per_s_without_notify']} without (phases in order: "
          f"{found['notify_phases']}), ratio {found['notify_ratio']}")
    return found


def floor_figures(floor: tuple[Phase, Phase], hellos: tuple[Phase, Phase]) -> dict[str, Any]:
    """Return and print the floor's steps against the ceiling, in requests/s and server CPU."""
    hello_rps = ceiling_per_s(hellos)
    hello_cpu_ms = sum(h.cpu_ms(h.server_cpu_s) for h in hellos) / 2
    round_trip, service = floor
    found = {"floor_redis_ratio": round(round_trip.per_s / hello_rps, 3),
             "floor_service_ratio": round(service.per_s / hello_rps, 3),
             "floor_redis_cpu_ms": round(round_trip.cpu_ms(round_trip.server_cpu_s), 3),
             "floor_service_cpu_ms": round(service.cpu_ms(service.server_cpu_s), 3),
             "hello_cpu_ms": round(hello_cpu_ms, 3)}
    print(f"floor, as a ratio to the ceiling in requests/s: {found['floor_redis_ratio']} with "
          f"one Redis round trip, {found['floor_service_ratio']} for the service's 404 of an "
          f"unknown game (gunicorn's CPU a request {found['floor_redis_cpu_ms']} and "
          f"{found['floor_service_cpu_ms']} ms, the hello-world's {found['hello_cpu_ms']} ms)")
    return found


def print_summary(summary: dict[str, Any], game: Phase, hellos: tuple[Phase, Phase]) -> None:
    """Print the ratios, the errors and the verdict of `spinner verify`, then the JSON line."""
    print(f"ratio to the ceiling: {summary['ratio']} in requests/s while every client was busy, "
          f"{summary['whole_run_ratio']} over the whole run "
          f"(moves/s over hello req/s: {summary['moves_per_s'] / ceiling_per_s(hellos):.3f}); "
          f"{summary['cpu_ratio']} in server CPU a request")
    samples = game.tally.error_samples + [e for h in hellos for e in h.tally.error_samples]
    print(f"errors: {summary['errors']} {samples[:8]}")
    print(f"verified: {summary['verified_games']}/{summary['games']} exports pass "
          f"`spinner verify`")
    print(json.dumps(summary))
