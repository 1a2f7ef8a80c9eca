"""Reading an obligation file for the proposer: its holes, the names it can use, where a hole is.

An obligation is an Agda file with one or more holes; its holes are its obligations. This module
reads the file's text only to *propose* (which names the fixture imports by name, which modules
it imports, the definition a hole belongs to); its signatures are read among Agda's own tokens
(``agda_tokens``, the lexer the scan uses), so a comment is whitespace here as it is to Agda. A misreading here can only change what is
proposed, never a verdict: every candidate is judged by a whole-file batch check.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass

from assay.proofs import AGDA_LINE_END, AgdaToken, agda_tokens, proof_language

_OPEN_IMPORT = re.compile(
    r"^(open\s+)?import\s+([^\s;()]+)(?:\s+as\s+([^\s;()]+))?(.*)$", re.MULTILINE
)
_USING = re.compile(r"\busing\s*\(([^)]*)\)")
_RENAMING = re.compile(r"\brenaming\s*\(([^)]*)\)")


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
    """The 1-based line and column (in code points, as Agda counts them, after any of its line
    endings: ``\f`` and U+2028 end a line too) of ``offset``."""
    ends = list(AGDA_LINE_END.finditer(text, 0, offset))
    start = ends[-1].end() if ends else 0
    return len(ends) + 1, offset - start + 1


def declaration_end(text: str, start: int) -> int | None:
    """Where the top-level declaration that begins at ``start`` ends (its last token, comments
    aside, as Agda's layout groups them), or None when none begins there."""
    for declaration in _declarations(text):
        if declaration.tokens[0].start == start:
            return declaration.tokens[-1].end
    return None


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


def _group_start(line: str, index: int) -> int | None:
    """Where the bracket of the bracketed atom starting at ``index`` is: ``(…)``, ``{…}`` and
    ``⦃…⦄`` at ``index``; a dot pattern ``.(…)`` (its bracket right after the dot); a record
    pattern ``record {…}`` (spaces between the keyword and its brace). None: no such atom."""
    if line[index] in _OPENING:
        return index
    if line.startswith(".(", index):
        return index + 1
    if line.startswith("record ", index):
        brace = index + len("record")
        while brace < len(line) and line[brace] == " ":
            brace += 1
        return brace if line.startswith("{", brace) else None
    return None


_RECORD_BRACE = re.compile(r"(?:^|[\s(){}⦃⦄])record\s+$")
_FIELD = re.compile(r"\s*([^\s(){}⦃⦄;=@\".]+)\s+=\s+\S.*", re.DOTALL)


def _assignments(inner: str) -> list[str]:
    """A record pattern's braces' content cut at its own ``;`` (not at a nested bracket's)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(inner):
        depth += (char in _OPENING) - (char in _CLOSING)
        if char == ";" and depth == 0:
            parts.append(inner[start:index])
            start = index + 1
    return [*parts, inner[start:]]


def fields_only(text: str) -> bool:
    """Whether every ``;`` in ``text`` separates field assignments directly inside a record
    pattern's braces (``record { a = x ; b = y }``, each part ``field = pattern``), and every
    such record pattern is made of field assignments only. Anywhere else a ``;`` separates
    declarations (``infixl 6 _⊕_ ; bad n = …``: a split replacing the line would delete the
    fixity), so a line holding one is never read as a clause. Unbalanced brackets or a string
    around a ``;`` are not read (False)."""
    if ";" not in text and "record" not in text:
        return True
    if '"' in text:
        return False
    stack: list[tuple[str, int | None]] = []  # a bracket's closer; where a record's fields start
    for index, char in enumerate(text):
        if char in _OPENING:
            record = char == "{" and _RECORD_BRACE.search(text[:index]) is not None
            stack.append((_OPENING[char], index + 1 if record else None))
        elif char in _CLOSING:
            if not stack or stack[-1][0] != char:
                return False
            fields = stack.pop()[1]
            if fields is not None and not all(
                (match := _FIELD.fullmatch(part)) and match.group(1) not in _NOT_A_PATTERN
                for part in _assignments(text[fields:index])
            ):
                return False
        elif char == ";" and (not stack or stack[-1][1] is None):
            return False
    return not stack


def read_clause(line: str) -> Clause | None:
    """``line`` read as one clause, or None for any shape this reader cannot read exactly (it
    never guesses): an indented or non-printable line, a string or character literal, an
    as-pattern, a comment, a hole, unbalanced brackets, a word glued to a bracket, a lone dot,
    a ``with`` / ``rewrite`` / ``...`` clause, a ``;`` in the left-hand side anywhere but
    between a record pattern's fields (``fields_only``; the right-hand side is not read). The
    ``=`` is Agda's only when it stands alone (``=?`` is a name) outside every bracket
    (``{p = ()}`` is a named pattern). A bracketed group is one atom, and so are the two
    patterns Agda prints with a dot or a keyword before the bracket: a dot pattern
    ``.(suc _)`` and a record pattern ``record { a = x ; b = y }``."""
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
        opening = _group_start(line, index)
        if opening is not None:
            end = _group_end(line, opening)
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
                if not atoms or not fields_only(line[:index]):
                    return None
                return Clause(tuple(atoms), index, rhs)
            if word in _NOT_A_PATTERN or word.startswith("'") or _unread(word) or ";" in word:
                return None
            if not word.strip("."):
                return None  # a lone dot: Agda reads `. (suc _)` as one dot pattern
            atoms.append(word)
        if end < size and line[end] != " ":
            return None  # a word glued to a bracket (`f.(x)`, `x(y)`): not read
        index = end
    return Clause(tuple(atoms), None, None) if atoms and fields_only(line) else None


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


"""A character Agda's lexer reads as a line break (``convertLineEndings``; CR LF ends in
``\n``): a token right after one is at column 0."""


@dataclass(frozen=True)
class _Declaration:
    """One top-level declaration as Agda's layout groups it: the program tokens (comments are
    whitespace to Agda) from one at column 0 up to the next at column 0."""

    tokens: tuple[AgdaToken, ...]

    @property
    def names(self) -> tuple[str, ...] | None:
        """The names it declares when it is a type signature: ``f : T``, ``f g : T``,
        ``_::_ : T``, ``f`` with ``: T`` on the indented lines below; None when it is not one
        (the first token is a keyword, or something other than names stands before the
        ``:``)."""
        for index, token in enumerate(self.tokens):
            if token.kind == "word" and token.text == ":":
                return tuple(t.text for t in self.tokens[:index]) or None
            if not _declarable(token):
                return None
        return None


def _declarable(token: AgdaToken) -> bool:
    """A token a signature can declare: an unqualified name that is no reserved word or
    symbol, or ``_`` (an anonymous definition, ``_ : 1 ≡ 1``)."""
    if token.kind == "symbol":
        return token.text == "_"
    return (
        token.kind == "word"
        and "." not in token.text
        and token.text not in _NOT_A_PATTERN
        and token.text not in ("=", "?")
    )


def _declarations(text: str) -> list[_Declaration]:
    """The file's top-level declarations, read among Agda's own tokens (``agda_tokens``), so a
    signature inside a comment (``{- m : Nat -}``, nested ``{- {- -} -}``, ``-- m : Nat``)
    declares nothing and a comment inside one (``f -- note`` / ``  : T``) hides nothing. Text
    Agda's lexer refuses has none: nothing is read from it."""
    try:
        found = agda_tokens(text)
    except ValueError:  # AgdaLexError: Agda would refuse the file too
        return []
    groups: list[list[AgdaToken]] = []
    for token in found:
        if token.kind == "comment":
            continue
        if token.start == 0 or AGDA_LINE_END.match(text, token.start - 1):
            groups.append([])
        if groups:
            groups[-1].append(token)
    return [_Declaration(tuple(group)) for group in groups]


def _signatures(text: str, end: int | None = None) -> list[tuple[tuple[str, ...], str]]:
    """(the names, the type as written) of every top-level signature starting before ``end``;
    the type's lines are stripped and joined by one space, comments left out."""
    found = []
    for declaration in _declarations(text):
        names, tokens = declaration.names, declaration.tokens
        if end is not None and tokens[0].start >= end:
            break
        if names is None:
            continue
        rest, pieces = tokens[len(names) + 1 :], []
        for token, after in itertools.pairwise(rest):
            gap = text[token.end : after.start]
            pieces += [token.text, " " if gap.strip() else gap]  # a comment: one space
        body = "".join(pieces) + (rest[-1].text if rest else "")
        lines = (part.strip() for part in body.split("\n"))
        found.append((names, " ".join(line for line in lines if line)))
    return found


def definitions(text: str, end: int) -> list[str]:
    """The names the top-level signatures before ``end`` declare (``_Declaration.names``)."""
    return list(dict.fromkeys(name for names, _ in _signatures(text, end) for name in names))


def enclosing(text: str, offset: int) -> str | None:
    """The name of the top-level definition whose clause holds the hole at ``offset``: the
    line that starts the top-level declaration holding it (comments are not declarations)
    read as a clause (``read_clause``) of one of the definitions the signatures above declare
    (``clause_of``: a mixfix clause ``m ! n`` is ``_!_``'s). None when that declaration is a
    signature or no clause this reader can read, or fits no definition or more than one: a
    misread name would key the split budget and the recursive shapes on the wrong
    definition, so nothing is guessed."""
    before = [d for d in _declarations(text) if d.tokens[0].start <= offset]
    if not before or before[-1].tokens[0].start == offset or before[-1].names is not None:
        return None
    start = before[-1].tokens[0].start
    stop = AGDA_LINE_END.search(text, start)
    clause = read_clause(text[start : stop.start() if stop else len(text)])
    if clause is None:
        return None
    return clause_of(clause.atoms, definitions(text, offset))


def signature(text: str, name: str) -> str:
    """The type of top-level ``name`` as written in the file (its signature's lines), or ""."""
    return next((body for names, body in _signatures(text) if name in names), "")


def local_lemmas(text: str, offset: int, own: str | None) -> list[str]:
    """Top-level names the file declares before the hole (its helper lemmas), not ``own``."""
    names = definitions(text, offset)
    return [name for name in names if name != own]


def nameable(name: str) -> bool:
    """A name worth proposing as a proof: not a mixfix operator (``_+_``) and not one symbol
    (``ℕ``): those are types or functions, never a lemma."""
    return "_" not in name and len(name) > 1
