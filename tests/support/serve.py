"""`spinner serve` driven as a user runs it, for the integration tests: the process and its
tree, HTTP calls on loopback, and a human-vs-AI game played until the AI has answered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from service.entrypoints.cli import GRACEFUL_TIMEOUT_S
from service.entrypoints.redis_server import STOP_TIMEOUT_S as REDIS_STOP_TIMEOUT_S

SPINNER = str(Path(sys.executable).parent / "spinner")  # the console script of this install
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = GRACEFUL_TIMEOUT_S + 5 + REDIS_STOP_TIMEOUT_S + 10
"""How long serve may take to stop: its own bound (its children, then its redis-server, each
killed past its timeout) and a margin."""
AI_TIMEOUT_S = 20.0
HUMAN, AI = 0, 1
LOOPBACK_ONLY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def call(method: str, url: str, body: Any = None,
         token: str | None = None) -> tuple[int, dict[str, str], Any]:
    """Send one HTTP request; return the status, the headers and the JSON answer."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with LOOPBACK_ONLY.open(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), json.loads(error.read())


def process_tree(root: int) -> dict[tuple[int, int], tuple[int, str]]:
    """Return every process below `root`, from /proc: {(pid, start time): (ppid, command)}."""
    below: dict[int, list[int]] = defaultdict(list)
    seen: dict[int, tuple[int, int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue  # it ended meanwhile
        below[int(stat[1])].append(int(entry.name))
        seen[int(entry.name)] = (int(stat[19]), int(stat[1]), command)
    tree, todo = {}, [root]
    while todo:
        for pid in below[todo.pop()]:
            started, ppid, command = seen[pid]
            tree[(pid, started)] = (ppid, command)
            todo.append(pid)
    return tree


def alive(process: tuple[int, int]) -> bool:
    """Whether this process (pid, start time) still runs (a zombie does not)."""
    pid, started = process
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return stat[0] != "Z" and int(stat[19]) == started


class Serve:
    """One `spinner serve --port <free> --data-dir <dir> [args]` process; its output goes to a
    log."""

    def __init__(self, data_dir: Path, log: Path, environ: dict[str, str], port: int,
                 spinner: str = SPINNER, cwd: Path | None = None, args: tuple[str, ...] = ()
                 ) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        command = [spinner, "serve", "--port", str(port), "--data-dir", str(data_dir), *args]
        self.process = start_logged(command, log, environ, cwd)

    def wait_healthy(self) -> None:
        """Wait until GET /healthz answers 200."""
        wait_healthy(self.url, self.process, self.log)

    def children(self) -> list[str]:
        """The command lines of the processes serve started itself."""
        tree = process_tree(self.process.pid).values()
        return [command for ppid, command in tree if ppid == self.process.pid]

    def ctrl_c(self) -> tuple[int, float]:
        """Send SIGINT; return serve's exit status and the seconds until every process of
        its tree had ended."""
        tree = process_tree(self.process.pid)
        start = time.monotonic()
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=STOP_TIMEOUT_S)
        while any(alive(p) for p in tree) and time.monotonic() - start < STOP_TIMEOUT_S:
            time.sleep(0.05)
        assert not [tree[p] for p in tree if alive(p)]
        return self.process.returncode, time.monotonic() - start

    def kill(self) -> None:
        """End this serve and every process below it, whatever state they are in."""
        tree = process_tree(self.process.pid)
        self.process.kill()
        self.process.wait()
        for pid, _ in filter(alive, tree):
            os.kill(pid, signal.SIGKILL)


def start_logged(command: list[str], log: Path, environ: dict[str, str],
                 cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start `command` with its output appended to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(command, env=environ, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT)


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until GET `url`/healthz answers 200 (failing if `process` exits first)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            if call("GET", f"{url}/healthz")[0] == 200:
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.1)
    pytest.fail(f"{url} did not become healthy:\n{log.read_text()}")


def own_redis_env() -> dict[str, str]:
    """The environment, less any Redis URL, with quick AI turns."""
    dropped = ("REDIS_URL", "SPINNER_REDIS_URL", "QUEUE_REDIS_URL", "SPINNER_QUEUE_REDIS_URL")
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, "AI_BUDGET_S": "0.05"}


def play_until_the_ai_has_answered(base: str) -> tuple[str, str, int]:
    """Create a human-vs-AI game; play the human seat until the AI seat has moved and it is
    the human's turn again. Return the game id, the human's token and the version."""
    status, _, created = call("POST", f"{base}/v1/games", {"players": [
        {"name": "Ann", "kind": "human"}, {"name": "Bot", "kind": "ai", "level": "random"}],
        "seed": 7})
    assert status == 201, created
    game_id, token = created["game_id"], created["seats"][HUMAN]["token"]
    human_moves, deadline = 0, time.monotonic() + AI_TIMEOUT_S
    while time.monotonic() < deadline:
        _, _, state = call("GET", f"{base}/v1/games/{game_id}", token=token)
        _, _, log = call("GET", f"{base}/v1/games/{game_id}/events?after={created['version']}",
                         token=token)
        ai_moved = any(event["seat"] == AI and event["data"].get("reason") != "search"
                       for event in log["events"])  # a search draw is the server's (R9)
        if state["turn"] == HUMAN and ai_moved and human_moves:
            return game_id, token, state["version"]
        if state["turn"] == HUMAN:
            status, _, answer = call("POST", f"{base}/v1/games/{game_id}/moves",
                                     state["legal_moves"][0], token)
            assert status == 200, answer
            human_moves += 1
        time.sleep(0.05)
    pytest.fail(f"the AI seat did not move by itself in {AI_TIMEOUT_S} s")
