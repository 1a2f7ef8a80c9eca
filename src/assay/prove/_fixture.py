"""Reading an obligation file for the proposer: its holes, the names it can use, where a hole is.

An obligation is an Agda file with one or more holes; its holes are its obligations. This module
reads the file's text only to *propose* (which names the fixture imports by name, which modules
it imports, the definition a hole belongs to). A misreading here can only change what is
proposed, never a verdict: every candidate is judged by a whole-file batch check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.proofs import proof_language

_OPEN_IMPORT = re.compile(
    r"^(open\s+)?import\s+([^\s;()]+)(?:\s+as\s+([^\s;()]+))?(.*)$", re.MULTILINE
)
_USING = re.compile(r"\busing\s*\(([^)]*)\)")
_RENAMING = re.compile(r"\brenaming\s*\(([^)]*)\)")
_SIGNATURE = re.compile(r"^([^\s:(){};@\"]+)\s+:(?:\s|$)")
_KEYWORDS = frozenset(
    {
        "open",
        "import",
        "module",
        "data",
        "record",
        "infix",
        "infixl",
        "infixr",
        "postulate",
        "private",
        "mutual",
        "abstract",
        "instance",
        "variable",
        "pattern",
        "syntax",
        "field",
        "constructor",
        "where",
        "--",
        "{-#",
        "{-",
    }
)


@dataclass(frozen=True)
class Import:
    """One import line: the module, the name it is qualified by, the names it opens by name."""

    module: str
    qualifier: str
    names: tuple[str, ...]


def holes(text: str) -> list[tuple[int, int]]:
    """The spans of the file's holes, read among Agda's own tokens (``{! !}``, not in comments)."""
    return proof_language("agda").holes(text)


def position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in code points, as Agda counts them) of ``offset``."""
    before = text[:offset]
    line = before.count("\n") + 1
    return line, offset - (before.rfind("\n") + 1) + 1


def imports(text: str) -> list[Import]:
    """Every ``import`` / ``open import`` line, with what it opens by name (``using``, the new
    names of ``renaming``)."""
    found = []
    for match in _OPEN_IMPORT.finditer(text):
        module, alias, rest = match.group(2), match.group(3), match.group(4)
        names: list[str] = []
        for group in _USING.findall(rest):
            names += [n.strip() for n in group.split(";") if n.strip()]
        for group in _RENAMING.findall(rest):
            for pair in group.split(";"):
                if " to " in pair:
                    names.append(pair.split(" to ", 1)[1].strip())
        found.append(Import(module, alias or module, tuple(names)))
    return found


def _top_lines(text: str, end: int) -> list[str]:
    return [line for line in text[:end].split("\n") if line and not line[0].isspace()]


def enclosing(text: str, offset: int) -> str | None:
    """The name of the top-level definition whose clause holds the hole at ``offset``."""
    for line in reversed(_top_lines(text, offset)):
        first = line.split()[0]
        if first in _KEYWORDS or first.startswith("--") or _SIGNATURE.match(line):
            continue
        return first
    return None


def signature(text: str, name: str) -> str:
    """The type of top-level ``name`` as written in the file (its signature's lines), or ""."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        match = _SIGNATURE.match(line)
        if match and match.group(1) == name:
            body = [line[match.end() :]]
            for more in lines[index + 1 :]:
                if not more or not more[0].isspace():
                    break
                body.append(more)
            return " ".join(part.strip() for part in body).strip()
    return ""


def local_lemmas(text: str, offset: int, own: str | None) -> list[str]:
    """Top-level names the file declares before the hole (its helper lemmas), not ``own``."""
    names = []
    for line in _top_lines(text, offset):
        match = _SIGNATURE.match(line)
        if match and match.group(1) != own and match.group(1) not in names:
            names.append(match.group(1))
    return names


def nameable(name: str) -> bool:
    """A name worth proposing as a proof: not a mixfix operator (``_+_``) and not one symbol
    (``ℕ``): those are types or functions, never a lemma."""
    return "_" not in name and len(name) > 1
