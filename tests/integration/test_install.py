"""The package as an integrator installs it: a wheel built from what the Dockerfile copies,
installed without extras into a fresh venv, runs `spinner serve`, `spinner worker` and the
image's command (issue 18, point 1), away from the source tree."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from service.entrypoints import processes
from service.entrypoints.redis_server import RedisServer, free_port
from tests.support.serve import (
    LOOPBACK_ONLY,
    Serve,
    own_redis_env,
    play_until_the_ai_has_answered,
    start_logged,
    wait_healthy,
)

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 300
STOP_TIMEOUT_S = 20
EXTRAS_ONLY = ("pytest", "schemathesis", "openapi_core", "mypy", "dominoes")
"""Modules only the `test` and `bench` extras bring: none may be in the fresh venv."""


def dockerfile(instruction: str) -> list[str]:
    """Return the arguments of each `instruction` line of the Dockerfile (continuations
    joined, comments left out)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.split(None, 1) for line in text.splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    return [words[1] for words in lines if words[0] == instruction]


def run(command: list[str | Path], **options: object) -> str:
    """Run `command` to its end; return its output, failing the test with it if it failed."""
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S, **options)
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return str(done.stdout)


def copy_what_the_image_copies(into: Path) -> Path:
    """Copy the files the Dockerfile's COPY lines name into `into` (no caches, no build
    leftovers); return it."""
    for arguments in dockerfile("COPY"):
        *sources, target = shlex.split(arguments)
        for source in sources:
            destination = into / target / source if target.endswith("/") else into / target
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, destination,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / source, destination)
    return into


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed, without extras; return its folder."""
    root = tmp_path_factory.mktemp("install")
    source = copy_what_the_image_copies(root / "source")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", root / "dist",
         source])
    (wheel,) = (root / "dist").glob("spinner_dominoes-*.whl")
    run([sys.executable, "-m", "venv", "--without-pip", root / "venv"])
    run([sys.executable, "-m", "pip", "--python", root / "venv" / "bin" / "python", "install",
         "--no-compile", wheel], cwd=root)  # this pip, its cache: nothing is fetched twice
    return root / "venv"


def venv_environ(venv: Path, home: Path, **settings: str) -> dict[str, str]:
    """The environment of the venv's commands: its bin first on PATH and not this one's, no
    PYTHONPATH, no Redis URL unless given, its own HOME (as the image's user has)."""
    here = str(Path(sys.executable).parent)
    path = [str(venv / "bin"), *(p for p in os.environ["PATH"].split(os.pathsep) if p != here)]
    environ = {k: v for k, v in own_redis_env().items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "XDG_RUNTIME_DIR")}
    return {**environ, "PATH": os.pathsep.join(path), "HOME": str(home), **settings}


def test_the_venv_runs_the_installed_package_without_any_extra(venv, tmp_path):
    code = ("import importlib.util, service, workers; print(service.__file__, workers.__file__);"
            f"print([m for m in {EXTRAS_ONLY!r} if importlib.util.find_spec(m)])")
    places, extras = run([venv / "bin" / "python", "-c", code], cwd=tmp_path,
                         env=venv_environ(venv, tmp_path)).splitlines()
    assert all(Path(place).is_relative_to(venv) for place in places.split()), places
    assert extras == "[]"


def test_spinner_serve_from_the_wheel_plays_a_move_and_its_worker_answers(venv, tmp_path):
    running = Serve(tmp_path / "var", tmp_path / "serve.log", venv_environ(venv, tmp_path),
                    free_port(), spinner=str(venv / "bin" / "spinner"), cwd=tmp_path)
    try:
        running.wait_healthy()
        children = running.children()
        assert len(children) == 5, children  # redis-server, the three workers, gunicorn
        python = [command for command in children if "redis-server" not in command]
        assert all(command.startswith(str(venv / "bin")) for command in python), children
        play_until_the_ai_has_answered(running.url)  # a human move, then the AI's through rq
        assert_the_page_is_served(running.url)
        assert running.ctrl_c()[0] == 0
    finally:
        if running.process.poll() is None:
            running.kill()
    assert "Traceback" not in running.log.read_text()


def assert_the_page_is_served(base: str) -> None:
    """The browser page, its modules and its full rules come with the wheel (issue 20)."""
    for path, text in (("/", "/web/js/game.js"), ("/web/js/game.js", "openStream"),
                       ("/web/rules.md", "R26"), ("/web/allfives.md", "F16"),
                       ("/rules/all-fives", "/web/js/rules.js")):
        with LOOPBACK_ONLY.open(base + path, timeout=10) as answer:
            assert answer.status == 200 and text in answer.read().decode(), path


def image_command(venv: Path, port: int) -> list[str]:
    """The Dockerfile's CMD, its gunicorn the venv's, bound to 127.0.0.1:`port`."""
    (command,) = (json.loads(arguments) for arguments in dockerfile("CMD"))
    assert command[0] == "gunicorn" and "0.0.0.0:8000" in command, command
    return [str(venv / "bin" / "gunicorn"),
            *(f"127.0.0.1:{port}" if part == "0.0.0.0:8000" else part for part in command[1:])]


def image_environ() -> dict[str, str]:
    """The variables the Dockerfile's ENV lines set."""
    pairs = (pair.split("=", 1) for line in dockerfile("ENV") for pair in shlex.split(line))
    return dict(pairs)


def test_the_images_command_and_spinner_worker_from_the_wheel_play_against_an_ai(
        venv, tmp_path):
    """As docker-compose runs them: the image's gunicorn command (API only) and `spinner
    worker`, on a Redis of their own, so only that worker can have played the AI's turn."""
    port, metrics = free_port(), tmp_path / "metrics"
    metrics.mkdir()
    with RedisServer(tmp_path / "redis", appendonly=False) as redis_server:
        environ = venv_environ(venv, tmp_path, **{
            **image_environ(), "REDIS_URL": redis_server.url,
            "PROMETHEUS_MULTIPROC_DIR": str(metrics)})
        logs = {"api": tmp_path / "api.log", "worker": tmp_path / "worker.log"}
        api = start_logged(image_command(venv, port), logs["api"], environ, tmp_path)
        worker = start_logged([str(venv / "bin" / "spinner"), "worker"], logs["worker"],
                              environ, tmp_path)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", api, logs["api"])
            play_until_the_ai_has_answered(f"http://127.0.0.1:{port}")
        finally:
            for process in (api, worker):
                processes.stop(process, STOP_TIMEOUT_S)
    for name, log in logs.items():
        assert "Traceback" not in log.read_text(), (name, log.read_text())
    assert (api.returncode, worker.returncode) == (0, 0)
