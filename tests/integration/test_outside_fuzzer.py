"""Issue 18, point 7: an outside fuzzer passes. schemathesis' own CLI, run from the project
root as the README says (`schemathesis run openapi.yaml --url URL --checks all`, with the
project's schemathesis.toml and the hooks it loads), against a real `spinner serve`: every
check of every phase passes (`ignored_auth` included, in the stateful phase too), and the
stateful phase, following only the links openapi.yaml declares, lands moves (200) with the
seat tokens those links hand on and reads exports (200) of matches that ended.

Bounded (`-n`, fixed seeds, at most 1 + MORE_RUNS runs). The serve lifts the AI-game cap per address
(`AI_GAMES_PER_CLIENT`), which an outside run trips at its fifth game with AI seats (429,
documented, and no failure either), so that the stateful phase gets games to play in, and
the address's rate limit, which runs one after another pass within a minute (a 429 to a move
sent without its token fails `ignored_auth`, which wants 401 or 403), and
has AI seats move without their usual pause (`AI_MIN_DELAY_S`), so that a match between AI
seats ends within a scenario and its export can be read."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import Serve, own_redis_env

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")
FULL_RUN = "examples,coverage,fuzzing,stateful"
MORE_RUNS = 4
"""The whole run (seed 7), then more stateful runs (seeds 8 on, with the examples phase
before them) until the stateful phase has landed a move and read an export through links, at
most MORE_RUNS: its moves are random walks over ~20 links a step, of which a few a run land;
and a match ends within a run only when a game made by the examples phase (two AI seats, one
hand) is picked up by a stateful scenario after its AI seats finished it. Either may miss in
a run (a run with none is possible, more often on a slow machine)."""
MOVES = "/v1/games/{game_id}/moves"
EXPORT = "/v1/games/{game_id}/export"


@pytest.fixture(scope="module")
def stateful_steps(tmp_path_factory: pytest.TempPathFactory,
                   free_port: int) -> Iterator[list[dict[str, Any]]]:
    """Run the CLI against a fresh serve, as FULL_RUN and MORE_RUNS say; return its steps."""
    work = tmp_path_factory.mktemp("fuzz")
    serve = Serve(work / "data", work / "serve.log",
                  {**own_redis_env(), "AI_GAMES_PER_CLIENT": "1000", "RATE_LIMIT_PER_ADDRESS": "0",
                   "AI_MIN_DELAY_S": "0.001"}, free_port)
    try:
        serve.wait_healthy()
        steps = _run(serve.url, FULL_RUN, "20", 7, work / "full")
        for seed in range(8, 8 + MORE_RUNS):
            if _linked(steps, MOVES) and _linked(steps, EXPORT):
                break
            steps += _run(serve.url, "examples,stateful", "40", seed, work / f"seed-{seed}")
    finally:
        serve.kill()
    yield steps


def _run(url: str, phases: str, examples: str, seed: int, report_dir: Path
         ) -> list[dict[str, Any]]:
    """One run of schemathesis' CLI, which must pass; the steps its report records."""
    run = subprocess.run(
        [SCHEMATHESIS, "run", "openapi.yaml", "--url", url, "--checks", "all",
         "--phases", phases, "-n", examples, "--seed", str(seed), "--report", "ndjson",
         "--report-dir", str(report_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)
    assert run.returncode == 0, run.stdout[-6000:]
    return [step for report in report_dir.glob("*.ndjson") for step in _steps(report)]


def _linked(steps: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """The stateful phase's requests to `path`, sent through a link, that got 200."""
    return [s for s in steps if s["phase"] == "stateful" and s["path"] == path
            and s["link"] is not None and s["status"] == 200]


def _steps(report: Path) -> list[dict[str, Any]]:
    """Every request the report records, with its phase, checks and answer's status."""
    steps = []
    for line in report.read_text().splitlines():
        scenario = json.loads(line).get("ScenarioFinished")
        if scenario is None:
            continue
        recorder = scenario["recorder"]
        for case_id, node in recorder.get("cases", {}).items():
            answer = recorder["interactions"].get(case_id, {}).get("response", {})
            steps.append({"phase": scenario["phase"], "path": node["value"]["path"],
                          "method": node["value"]["method"],
                          "link": (node.get("transition") or {}).get("id"),
                          "status": answer.get("status_code"),
                          "checks": recorder.get("checks", {}).get(case_id, [])})
    return steps


@pytest.fixture(scope="module")
def free_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_every_check_passes(stateful_steps: list[dict[str, Any]]) -> None:
    failed = [(s["method"], s["path"], c["name"]) for s in stateful_steps
              for c in s["checks"] if c["status"] == "failure"]
    assert not failed
    assert {s["phase"] for s in stateful_steps} >= {"examples", "coverage", "fuzzing",
                                                    "stateful"}


def test_the_stateful_phase_moves_in_the_games_it_makes(
        stateful_steps: list[dict[str, Any]]) -> None:
    """Moves sent through the declared links, with the seat token a link handed on, land."""
    assert _linked(stateful_steps, MOVES), "no move sent through a link was accepted"


def test_the_stateful_phase_checks_the_seat_tokens_it_hands_on(
        stateful_steps: list[dict[str, Any]]) -> None:
    """`ignored_auth` runs on the accepted moves and passes (it probes them without the
    token and with a wrong one)."""
    checked = [c for s in stateful_steps if s["phase"] == "stateful" and s["path"] == MOVES
               and s["status"] == 200 for c in s["checks"] if c["name"] == "ignored_auth"]
    assert checked and all(c["status"] == "success" for c in checked)


def test_the_stateful_phase_reads_the_export_of_an_ended_match(
        stateful_steps: list[dict[str, Any]]) -> None:
    assert _linked(stateful_steps, EXPORT), "no export read through a link was answered"
