"""The project's own promises: CI runs exactly the README's test command, and that command lints,
type-checks and checks the layers before the tests."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README.md starts with a bash block of set-up commands"
    return [ln for ln in block.group(1).splitlines() if ln and not ln.startswith("#")]


def test_readme_starts_with_exactly_two_commands_and_ci_runs_the_second():
    commands = _readme_commands()
    assert len(commands) == 2
    ci = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.startswith("python3")]
    assert ci == [commands[1]]


def test_the_test_command_lints_type_checks_and_checks_layers_first():
    command = _readme_commands()[1]
    steps = [s.strip() for s in command.split("&&")]
    order = [
        "ruff check .",
        "ruff format --check .",
        "mypy",
        "lint-imports",
        "python -m pytest -n 2",
    ]
    assert [s for s in steps if s in order] == order
