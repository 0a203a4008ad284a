"""Run every attack of issue 17 against a fresh `spinner serve`; print what each gets.

    python -m bench.attacks          # a Markdown table, then one JSON line
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from bench.attacks import attacks
from bench.attacks.http import Client


def free_port() -> int:
    """Return a free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(data_dir: Path, port: int, api_key: str) -> tuple[subprocess.Popen[str], str]:
    """Start `spinner serve` with default settings and one API key; return it and Redis's URL."""
    digest = hashlib.sha256(api_key.encode()).hexdigest()
    env = {**os.environ, "SPINNER_API_KEYS": f"attacks:{digest}"}
    for name in ("REDIS_URL", "SPINNER_REDIS_URL"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "service.entrypoints.cli", "serve", "--port", str(port),
         "--data-dir", str(data_dir)], env=env, stdout=subprocess.PIPE, text=True,
        process_group=0)
    assert process.stdout is not None
    url = ""
    while not url:
        line = process.stdout.readline()
        if not line:
            raise SystemExit("spinner serve stopped")
        found = re.search(r"redis-server on (\S+)", line)
        url = found.group(1) if found else ""
    return process, url


def wait_healthy(client: Client) -> None:
    """Wait until /healthz answers 200."""
    for _ in range(300):
        try:
            if client.call("GET", "/healthz", timeout=1).status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("the service did not become healthy")


def main() -> int:
    """Start the service, run the attacks in an order that keeps one from skewing the next."""
    api_key = secrets.token_urlsafe(24)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        process, url = serve(Path(tmp), port, api_key)
        try:
            keyed, anonymous = Client(port, {"X-Api-Key": api_key}), Client(port)
            wait_healthy(anonymous)
            store = redis.Redis.from_url(url)
            findings = [
                attacks.seeded_deal(keyed), attacks.expert_timing(keyed),
                attacks.storage(keyed, store), attacks.smaller(keyed),
                attacks.ai_flood(keyed, anonymous), attacks.slow_bodies(port, anonymous),
                attacks.full_store(keyed, store), attacks.quotas(anonymous, api_key)]
        finally:
            os.killpg(process.pid, signal.SIGINT)
            process.wait(60)
    print("| attack | what it gets now |\n|---|---|")
    for finding in findings:
        print(f"| {finding.attack} | {finding.got} |")
    print(json.dumps([finding.__dict__ for finding in findings]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
