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
