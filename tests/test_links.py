"""The repository stands alone: every link in its docs points at a file inside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    """Targets of markdown links, outside code blocks and code spans."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return _LINK.findall(text)


def outside(doc: Path, target: str) -> str | None:
    """Why ``target`` (linked from ``doc``) is not a file of this repository, or None."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
        return "a link outside the repository"
    path = (doc.parent / target.split("#", 1)[0]).resolve()
    if not path.is_relative_to(ROOT):
        return "a path outside the repository"
    if not path.exists():
        return "a file that does not exist"
    return None


def test_the_link_reader_finds_what_it_must_refuse() -> None:
    text = "see [x](https://example.org), [y](../shared/design.md) and `[z](http://a)`"
    assert links(text) == ["https://example.org", "../shared/design.md"]
    assert outside(ROOT / "README.md", "https://example.org") is not None
    assert outside(ROOT / "README.md", "../shared/design.md") is not None
    assert outside(ROOT / "README.md", "docs/nothing-here.md") is not None
    assert outside(ROOT / "README.md", "docs/kinds.md") is None


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_points_inside_the_repository(doc: Path) -> None:
    problems = [
        f"{target}: {why}"
        for target in links(doc.read_text())
        if (why := outside(doc, target)) is not None
    ]
    assert not problems, f"{doc.name}: {problems}"
