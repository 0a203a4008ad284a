"""The code's own standards, checked in CI: ruff clean, strict mypy on the core, a pure core."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("command", [
    ["ruff", "check", "service", "workers", "tests", "bench"],
    ["mypy"],
    ["lint-imports"],
], ids=["ruff", "mypy-strict-core", "import-contract"])
def test_tooling_passes(command: list[str]) -> None:
    """Each linter exits 0 over the tree (rules R1-R26 live in a pure, typed core)."""
    result = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
