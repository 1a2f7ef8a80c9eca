"""Reading an obligation file for the proposer: its holes, the names it can use, where a hole is.

An obligation is an Agda file with one or more holes; its holes are its obligations. This module
reads the file's text only to *propose* (which names the fixture imports by name, which modules
it imports, the definition a hole belongs to). A misreading here can only change what is
proposed, never a verdict: every candidate is judged by a whole-file batch check.
"""

from __future__ import annotations

import re
from collections.abc import Collection
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


_OPENING = {"(": ")", "{": "}", "⦃": "⦄"}
_CLOSING = frozenset(_OPENING.values())
# fmt: off
_NOT_A_PATTERN = frozenset({
    "abstract", "codata", "coinductive", "constructor", "data", "do", "eta-equality", "field",
    "forall", "hiding", "import", "in", "inductive", "infix", "infixl", "infixr", "instance",
    "interleaved", "let", "macro", "module", "mutual", "no-eta-equality", "opaque", "open",
    "overlap", "pattern", "postulate", "primitive", "private", "public", "quote",
    "quoteContext", "quoteGoal", "quoteTerm", "record", "renaming", "rewrite", "syntax",
    "tactic", "unfolding", "unquote", "unquoteDecl", "unquoteDef", "using", "variable", "where",
    "with", "Set", "Prop", ":", "|", "...", "→", "->", "∀", "λ", "\\",
})
# fmt: on
"""Agda's reserved words and symbols: a left-hand side holding one is something other than
patterns (a ``with`` or ``rewrite`` clause, a continuation ``...``, a signature, a fixity or
other declaration), so such a line is not read as a clause."""


@dataclass(frozen=True)
class Clause:
    """A one-line clause ``p₁ … pₙ = rhs`` (or ``p₁ … pₙ``: no right-hand side) as the reader
    splits it: its left-hand side's top-level patterns, a bracketed group kept whole."""

    atoms: tuple[str, ...]
    equals: int | None
    """Where the ``=`` ending the left-hand side is in the line; None: no right-hand side."""
    rhs: int | None
    """Where the right-hand side starts (after the ``=`` and its spaces); None: none."""


def _group_end(line: str, start: int) -> int | None:
    """The offset just after the bracket closing the one at ``start`` (nested brackets of
    every kind balanced), or None when the brackets do not balance."""
    stack: list[str] = []
    for index in range(start, len(line)):
        char = line[index]
        if char in _OPENING:
            stack.append(_OPENING[char])
        elif char in _CLOSING:
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return index + 1
    return None


def _unread(pattern: str) -> bool:
    """A pattern holding what this reader does not read: a hole, a comment, a pragma, a string,
    an as-pattern."""
    return any(mark in pattern for mark in ("{!", "--", "{-", "-}", '"', "@"))


def read_clause(line: str) -> Clause | None:
    """``line`` read as one clause, or None for any shape this reader cannot read exactly (it
    never guesses): an indented or non-printable line, a string or character literal, an
    as-pattern, a comment, a hole, unbalanced brackets, a word glued to a bracket, a ``with`` /
    ``rewrite`` / ``...`` clause. The ``=`` is Agda's only when it stands alone (``=?`` is a
    name) outside every bracket (``{p = ()}`` is a named pattern)."""
    if not line or line[0].isspace() or not line.isprintable():
        return None
    atoms: list[str] = []
    index, size = 0, len(line)
    while index < size:
        char = line[index]
        if char == " ":
            index += 1
            continue
        if char in _CLOSING:
            return None
        if char in _OPENING:
            end = _group_end(line, index)
            if end is None or _unread(line[index:end]):
                return None
            atoms.append(line[index:end])
        else:
            end = index
            while end < size and line[end] != " " and line[end] not in _OPENING:
                if line[end] in _CLOSING:
                    return None
                end += 1
            word = line[index:end]
            if word == "=":
                rhs = end
                while rhs < size and line[rhs] == " ":
                    rhs += 1
                return Clause(tuple(atoms), index, rhs) if atoms else None
            if word in _NOT_A_PATTERN or word.startswith("'") or _unread(word):
                return None
            atoms.append(word)
        if end < size and line[end] != " ":
            return None  # a word glued to a bracket (`.(x)`, `x(y)`): not read
        index = end
    return Clause(tuple(atoms), None, None) if atoms else None


def operator_arguments(name: str, atoms: tuple[str, ...]) -> list[tuple[str, ...]] | None:
    """The arguments of mixfix ``name`` (``_!_``, ``if_then_else_``) when ``atoms`` read as its
    application (``m ! suc n``: ``m`` and ``suc n``), each argument one or more atoms; None when
    they do not, or read so in more than one way."""
    parts = name.split("_")
    if len(parts) < 2 or any(not part for part in parts[1:-1]) or not any(parts):
        return None  # not an operator, two argument places side by side, or `_` (anonymous)
    shape: list[str | None] = []
    for index, part in enumerate(parts):
        if index:
            shape.append(None)
        if part:
            shape.append(part)
    found: list[list[tuple[str, ...]]] = []

    def match(at: int, position: int, args: list[tuple[str, ...]]) -> None:
        if len(found) > 1:
            return
        if position == len(shape):
            if at == len(atoms):
                found.append(list(args))
            return
        part = shape[position]
        if part is not None:
            if at < len(atoms) and atoms[at] == part:
                match(at + 1, position + 1, args)
            return
        for stop in range(at + 1, len(atoms) + 1):
            if any(atom in parts for atom in atoms[at:stop]):
                break  # a name part is never inside an argument
            match(stop, position + 1, [*args, atoms[at:stop]])

    match(0, 0, [])
    return found[0] if len(found) == 1 else None


def clause_of(atoms: tuple[str, ...], declared: Collection[str]) -> str | None:
    """Which of the ``declared`` definitions a left-hand side is a clause of: ``f p₁ … pₙ``
    (prefix, also ``_!_ m n``) or a mixfix operator applied (``m ! n``); None unless exactly
    one reading fits (``m ! n`` with both ``m`` and ``_!_`` declared is not guessed)."""
    readings = {atoms[0]} if atoms and atoms[0] in declared else set()
    readings |= {
        name for name in declared if "_" in name and operator_arguments(name, atoms) is not None
    }
    return readings.pop() if len(readings) == 1 else None


def definitions(text: str, end: int) -> list[str]:
    """The names the top-level signatures before ``end`` declare: ``f : T`` on one line, or
    ``f`` alone on a line with its type on the indented lines below (``  : T``)."""
    lines = text[:end].split("\n")
    names: list[str] = []
    for index, line in enumerate(lines):
        if not line or line[0].isspace():
            continue
        match = _SIGNATURE.match(line)
        if match:
            names.append(match.group(1))
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if (
            len(line.split()) == 1
            and line.split()[0] not in _KEYWORDS
            and following[:1].isspace()
            and following.lstrip().startswith(": ")
        ):
            names.append(line.split()[0])
    return list(dict.fromkeys(names))


def enclosing(text: str, offset: int) -> str | None:
    """The name of the top-level definition whose clause holds the hole at ``offset``: the
    nearest unindented line above it (comment lines aside) read as a clause (``read_clause``)
    of one of the definitions the signatures above declare (``clause_of``: a mixfix clause
    ``m ! n`` is ``_!_``'s). None when that line is no clause this reader can read, or fits no
    definition or more than one: a misread name would key the split budget and the recursive
    shapes on the wrong definition, so nothing is guessed."""
    for line in reversed(_top_lines(text, offset)):
        if line.lstrip().startswith("--"):
            continue
        if line.split()[0] in _KEYWORDS or _SIGNATURE.match(line):
            return None
        clause = read_clause(line)
        if clause is None:
            return None
        return clause_of(clause.atoms, definitions(text, offset))
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
