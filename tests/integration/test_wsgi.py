"""The gunicorn entry point, imported as a worker imports it."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

from service.entrypoints.redis_server import free_port


def test_the_entry_point_freezes_what_it_built_so_collections_skip_it() -> None:
    """Every object alive once the app is built is frozen: the collector's generations start
    empty, and a full collection never walks the modules, the app or its schemas again; and
    it looks for cycles only once many young objects have piled up."""
    probe = ("import gc, json, service.entrypoints.wsgi; print(json.dumps("
             "[gc.get_freeze_count(), len(gc.get_objects()), gc.get_threshold()[0]]))")
    env = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "PATH": ""}  # built, never used
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    frozen, tracked, young = json.loads(done.stdout.splitlines()[-1])
    assert frozen > 10_000
    assert tracked < 100
    assert young == 20_000 > gc.get_threshold()[0]  # CPython's own default is 700
