"""The docs are generated from, or checked against, the code, so they cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import all_kinds
from assay.cli._app import app
from assay.cli._render import kinds_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_kinds_reference_is_current() -> None:
    assert (ROOT / "docs" / "kinds.md").read_text() == kinds_markdown(all_kinds()), (
        "docs/kinds.md is stale: run `.venv/bin/assay kinds --markdown > docs/kinds.md`"
    )


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda k: k.name)
def test_every_kind_is_documented_and_tested(kind: object) -> None:
    name = kind.name  # type: ignore[attr-defined]
    spec = kind.spec  # type: ignore[attr-defined]
    assert len(kind.summary) > 20  # type: ignore[attr-defined]
    for field, info in spec.model_fields.items():
        assert info.description, f"{name}.{field} has no docstring"
    tests = "\n".join(
        p.read_text() for p in (ROOT / "tests" / "checks" / "kinds").glob("test_*.py")
    )
    assert f'"{name}"' in tests, f"no test names the kind {name}"


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for command in app.registered_commands:
        assert command.callback is not None and command.callback.__doc__
        assert f"assay {command.name or command.callback.__name__}" in readme


def _console_examples() -> list[tuple[str, str]]:
    """(command, expected output) for each README console example with exact output."""
    import re

    readme = (ROOT / "README.md").read_text()
    examples = []
    for block in re.findall(r"```console\n(.*?)```", readme, re.DOTALL):
        lines = block.strip().splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ .venv/bin/assay ") and i + 1 < len(lines):
                output = lines[i + 1]
                if "..." not in output and not output.startswith("$"):
                    examples.append((line[2:], output))
    return examples


@pytest.mark.parametrize(("command", "output"), _console_examples(), ids=lambda x: x[:60])
def test_readme_console_examples_print_what_they_say(command: str, output: str) -> None:
    import shlex
    import subprocess
    import sys

    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/assay"
    result = subprocess.run(
        [sys.executable, "-m", "assay", *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.strip() == output


def test_readme_has_console_examples_to_check() -> None:
    assert len(_console_examples()) >= 2
