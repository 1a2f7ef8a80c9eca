"""Retrieval (a labeled switch): library lemmas ranked against a goal, in-scope rows only.

The corpus is read from the installed agda-stdlib's sources: every top-level type signature
(``name : type``) of a module, i.e. its names and types as written. A fixture can name a row only
when it imports the row's module (``import M`` brings every ``M.x`` into scope, also under
``open import M using (...)``), so the pool holds only those modules' rows, each rendered through
the qualifier the fixture gave the module. Ranking is a deterministic token-overlap score
(shared tokens of the statement and of the row's type and name, weighted by rarity across the
pool); ties go by name. Each obligation's own original (the definition the hole belongs to, and
the manifest's ``original``) is **excluded** from the pool unless ``exclusion`` is off, a labeled
control; every exclusion is named in the run's ledger.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assay.prove._fixture import Import, nameable

TOP_K = 8
_SIGNATURE = re.compile(r"^([^\s:(){};@\"._][^\s:(){};@\"]*)\s+:(?:\s|$)")
_TOKEN = re.compile(r"[^\s(){}⦃⦄;.]+")
_NOISE = re.compile(r"^([a-zA-Z][0-9′']*|xs|ys|zs|∀|→|:|=|_)$")
"""Binder variables (``m``, ``xs``) and the arrow say nothing about which lemma fits."""


@dataclass(frozen=True)
class Row:
    """One library lemma: its module, its name and its type as the source writes it."""

    module: str
    name: str
    type: str


@dataclass(frozen=True)
class Ranked:
    """A row as the fixture names it (``qualified``), with its score and 1-based rank."""

    qualified: str
    row: Row
    score: float
    rank: int


def tokens(text: str) -> list[str]:
    """Words of a type or a name: ``+-comm`` gives ``+`` and ``comm``; brackets split; binder
    variables and arrows dropped (``_NOISE``)."""
    out: list[str] = []
    for word in _TOKEN.findall(text):
        out += [part for part in word.split("-") if part] if "-" in word[1:] else [word]
    return [word for word in out if not _NOISE.match(word)]


@lru_cache(maxsize=256)
def module_rows(library: str, module: str) -> tuple[Row, ...]:
    """The exported signatures of ``module`` in the library at ``library`` (none when absent):
    top-level ones and those of anonymous ``module _`` blocks, never ``private`` ones."""
    path = Path(library).joinpath(*module.split(".")).with_suffix(".agda")
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return ()
    rows: list[Row] = []
    anonymous = private = False
    for index, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and indent == 0:
            anonymous, private = line.startswith("module _"), False
        if line.strip() and indent == 2 and anonymous:
            private = line.strip() == "private"
        exported = indent == 0 or (indent == 2 and anonymous and not private)
        match = _SIGNATURE.match(line[indent:]) if exported else None
        if not match or match.group(1) in ("open", "import", "module", "data", "record"):
            continue
        body = [line[indent + match.end() :]]
        for more in lines[index + 1 :]:
            if not more.strip() or len(more) - len(more.lstrip(" ")) <= indent:
                break
            body.append(more)
        text = " ".join(part.strip() for part in body).strip()
        if nameable(match.group(1)):
            rows.append(Row(module, match.group(1), text))
    return tuple(rows)


def pool(library: str, fixture_imports: list[Import]) -> list[tuple[str, Row]]:
    """Every row the fixture can name, as (qualified name, row), each qualified name once."""
    found: dict[str, Row] = {}
    for imported in fixture_imports:
        for row in module_rows(library, imported.module):
            found.setdefault(f"{imported.qualifier}.{row.name}", row)
    return sorted(found.items())


def excluded(qualified: str, row: Row, originals: set[str]) -> bool:
    """Whether a row is one of the obligation's originals (by its name or its full name)."""
    return bool({row.name, qualified, f"{row.module}.{row.name}"} & originals)


def rank(statement: str, rows: list[tuple[str, Row]]) -> list[Ranked]:
    """The rows ranked against ``statement`` (highest score first, then by qualified name)."""
    frequency: Counter[str] = Counter()
    row_tokens = []
    for _, row in rows:
        words = set(tokens(row.type)) | set(tokens(row.name))
        row_tokens.append(words)
        frequency.update(words)
    query = set(tokens(statement))
    total = len(rows) or 1
    scored = []
    for (qualified, row), words in zip(rows, row_tokens, strict=True):
        score = sum(math.log(1 + total / frequency[word]) for word in query & words)
        score /= math.sqrt(len(words) or 1)
        scored.append((-round(score, 9), qualified, row))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [
        Ranked(qualified, row, -negative, index + 1)
        for index, (negative, qualified, row) in enumerate(scored)
    ]


def retrieve(
    library: str,
    fixture_imports: list[Import],
    statement: str,
    originals: set[str],
    exclusion: bool = True,
    k: int = TOP_K,
) -> tuple[list[Ranked], list[str]]:
    """The top ``k`` rows for ``statement`` and the qualified names excluded from the pool."""
    rows = pool(library, fixture_imports)
    gone = [q for q, row in rows if exclusion and excluded(q, row, originals)]
    kept = [(q, row) for q, row in rows if q not in gone]
    return rank(statement, kept)[:k], gone
