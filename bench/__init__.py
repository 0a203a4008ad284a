"""Benchmarks that print figures (never timed assertions in tests).

Each runs from the repository root as `python -m bench.<name>`.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: where the benches run the service's processes from."""
