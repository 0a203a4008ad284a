"""openapi.yaml as an integrator uses it (issue 18, points 2 and 3): the Python client that
openapi-python-client generates from it types each event's `data`, tells a seat's state from a
spectator's, a human seat from an AI seat and Spinner's rules from All Fives' (issue 22), and
lets a client without credentials create games and read them; a program that knows only that
client (tests/integration/generated/play.py) passes `mypy --strict` and plays whole matches
against `spinner serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.entrypoints.redis_server import free_port
from tests.support.serve import Serve, own_redis_env

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROGRAM = Path(__file__).parent / "generated" / "play.py"
PACKAGE = "spinner_client"
MISTAKES = """
from spinner_client import Client
from spinner_client.api.games import post_move
from spinner_client.models import HandEndedEvent, MoveRequest, MoveRequestAction, PublicState


def new_ends(event: HandEndedEvent) -> list[str]:
    return event.data.new_ends


def hand(state: PublicState) -> list[str]:
    return state.hand


def draw_as_nobody(client: Client) -> None:
    post_move.sync("g", client=client, body=MoveRequest(action=MoveRequestAction.DRAW))
"""
"""A program that types must refuse: one event type's data read as another's, a spectator's
state read for a hand, and a move sent without a seat's credentials."""


def run(command: list[str | Path], cwd: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    """Run `command` in `cwd` (outside the project, so that no project config applies)."""
    return subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env={**os.environ, **environ})


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generate the client from openapi.yaml; return the folder holding its package."""
    folder = tmp_path_factory.mktemp("generated")
    (folder / "config.yaml").write_text("post_hooks: []\n")  # no formatting: nobody reads it
    result = run([BIN / "openapi-python-client", "generate", "--path", ROOT / "openapi.yaml",
                  "--output-path", folder / PACKAGE, "--meta", "none",
                  "--config", folder / "config.yaml"], folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    return folder


def mypy_strict(generated: Path, program: Path) -> subprocess.CompletedProcess[str]:
    """`mypy --strict` over `program`, the generated package on its path."""
    return run([BIN / "mypy", "--strict", program], generated, MYPYPATH=str(generated))


def test_the_program_type_checks_against_the_generated_client(generated: Path) -> None:
    result = mypy_strict(generated, PROGRAM)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_generated_types_refuse_what_the_contract_forbids(generated: Path) -> None:
    """The types are real ones, not `Any`: each mistake is an error of its own."""
    (generated / "mistakes.py").write_text(MISTAKES)
    result = mypy_strict(generated, generated / "mistakes.py")
    assert result.returncode == 1
    assert '"HandEndedData" has no attribute "new_ends"' in result.stdout, result.stdout
    assert '"PublicState" has no attribute "hand"' in result.stdout, result.stdout
    assert 'has incompatible type "Client"; expected "AuthenticatedClient"' in result.stdout


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    """`spinner serve` on its own redis-server, with quick AI turns; yield its base URL."""
    running = Serve(tmp_path / "var", tmp_path / "serve.log", own_redis_env(), free_port())
    try:
        running.wait_healthy()
        yield running.url
    finally:
        running.kill()


def test_the_program_plays_whole_matches_through_the_generated_client_only(
        generated: Path, service: str, tmp_path: Path) -> None:
    result = run([sys.executable, PROGRAM, service], tmp_path, PYTHONPATH=str(generated))
    assert result.returncode == 0, result.stdout + result.stderr
    matches: dict[str, dict[str, Any]] = json.loads(result.stdout)
    for name, match in matches.items():
        assert match["moves"] > 0, name
        assert match["logged_winners"] == [match["winners"]] and match["winners"], name
        assert match["new_ends"] and all(end.startswith("e") for end in match["new_ends"])
        assert set(match["acted"]) == {"0", "1"}, name  # each seat moved, the AI seat too
        fives = name == "all_fives"  # its rules typed apart by their variant (issue 22)
        assert match["variant"] == ("all_fives" if fives else "spinner"), name
        assert (len(match["leader_drawn"]) == 2 and max(match["totals"]) >= 50) if fives \
            else (match["leader_drawn"] == [] and match["points"] == 0), name
