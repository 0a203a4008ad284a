"""The README names every knob an operator has: each setting, and each option of each
`spinner` command (a knob missing from it is one no operator finds)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from service.adapters.settings import Settings
from service.entrypoints import cli

README = (Path(__file__).parents[2] / "README.md").read_text()


def options_of(command: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    """Return the options `spinner <command> --help` lists."""
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    return set(re.findall(r"(--[a-z][a-z-]+)", capsys.readouterr().out)) - {"--help"}


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_each_option_of_each_command_is_in_the_readme(command, capsys):
    options = options_of(command, capsys)
    missing = {option for option in options
               if not re.search(rf"(?<![\w-]){option}(?![\w-])", README)}
    assert options and missing == set()


def test_each_setting_is_in_the_readmes_table():
    names = [field.name.upper() for field in fields(Settings)]
    assert [name for name in names if f"| `{name}` |" not in README] == []
