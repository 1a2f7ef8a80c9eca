"""The cheap pre-filter: shapes that let a proof assume its goal, refused before any judgment.

Each scanner first blanks out comments and string literals (so a ``postulate`` in a comment is
not a finding and a ``postulate`` after a fake comment opener is), then looks for the shapes as
whole words. This is a pre-filter: the real guards are the flags on the command line (``--safe``)
and the assumption audit after the check (``Print Assumptions``, ``#print axioms``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Shapes = list[str]


def _strip_nested(
    text: str, opener: str, closer: str, line: str | None, keep: str | None = None
) -> str:
    """Blank nested block comments, line comments and "strings"; ``keep`` openers (pragmas) stay."""
    out = list(text)
    i, depth, start = 0, 0, 0
    n = len(text)
    while i < n:
        if depth == 0 and text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
            continue
        if keep is not None and depth == 0 and text.startswith(keep, i):
            close = text.find("#-}", i + len(keep))
            i = n if close == -1 else close + 3  # a pragma is kept whole ("--" inside is a flag)
            continue
        if text.startswith(opener, i):
            if depth == 0:
                start = i
            depth += 1
            i += len(opener)
            continue
        if depth and text.startswith(closer, i):
            depth -= 1
            i += len(closer)
            if depth == 0:
                for k in range(start, i):
                    if out[k] != "\n":
                        out[k] = " "
            continue
        if depth == 0 and line is not None and text.startswith(line, i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            for k in range(i, j):
                out[k] = " "
            i = j
            continue
        i += 1
    if depth:  # an unclosed comment hides everything after it: blank it all
        for k in range(start, n):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


def agda_code(text: str) -> str:
    """Agda source with comments and strings blanked; pragmas ``{-# ... #-}`` are kept."""
    return _strip_nested(text, "{-", "-}", "--", keep="{-#")


def coq_code(text: str) -> str:
    return _strip_nested(text, "(*", "*)", None)


def lean_code(text: str) -> str:
    return _strip_nested(text, "/-", "-/", "--")


def _words(code: str, words: Iterable[str]) -> Shapes:
    found = []
    for word in words:
        if re.search(rf"(?<![\w']){re.escape(word)}(?![\w'])", code):
            found.append(word)
    return found


AGDA_HARMLESS_OPTIONS = frozenset({"--safe", "--without-K", "--exact-split"})
"""Options that only restrict what is accepted; allowed in any file."""
AGDA_ALWAYS_REFUSED_OPTIONS = frozenset(
    {
        "--cubical",
        "--type-in-type",
        "--no-positivity-check",
        "--no-termination-check",
        "--injective-type-constructors",
        "--experimental-irrelevance",
        "--rewriting",
        "--allow-unsolved-metas",
        "--allow-incomplete-matches",
        "--omega-in-omega",
        "--guardedness-preserving-type-constructors",
        "--no-universe-check",
        "--sized-types",
    }
)


def agda_refusals(text: str, allowed_options: Iterable[str] = ()) -> Shapes:
    """Refused Agda shapes: postulates (``let postulate`` too), pragmas other than OPTIONS,
    OPTIONS flags not allowed (``--cubical`` and the unsafe ones never), ``primTrustMe``."""
    code = agda_code(text)
    allowed = (set(allowed_options) | AGDA_HARMLESS_OPTIONS) - AGDA_ALWAYS_REFUSED_OPTIONS
    shapes = [f"`{w}`" for w in _words(code, ("postulate", "primTrustMe", "primEraseEquality"))]
    for match in re.finditer(r"\{-#(.*?)#-\}", code, re.DOTALL):
        body = match.group(1).split()
        if not body:
            shapes.append("an empty pragma")
        elif body[0] != "OPTIONS":
            shapes.append(f"the {body[0]} pragma")
        else:
            for flag in body[1:]:
                if flag not in allowed:
                    shapes.append(f"the option {flag}")
    if re.search(r"\{-#(?!.*?#-\})", code, re.DOTALL):
        shapes.append("an unterminated pragma")
    return shapes


def agda_candidate_refusals(term: str) -> Shapes:
    """A hole candidate is one term: no newline, comment, pragma or declaration can ride in it."""
    shapes = agda_refusals(term)
    for token, name in (
        ("\n", "a line break"),
        ("\r", "a line break"),
        ("{-", "a block comment"),
        ("-}", "a block comment"),
        ("--", "a line comment"),
        (";", "a declaration separator"),
    ):
        if token in term and name not in shapes:
            shapes.append(name)
    if not term.strip():
        shapes.append("an empty candidate")
    return shapes


_COQ_WORDS = (
    "Admitted",
    "Admit",
    "Axiom",
    "Axioms",
    "Parameter",
    "Parameters",
    "Conjecture",
    "admit",
    "give_up",
    "bypass_check",
)
_COQ_UNSETS = re.compile(r"\bUnset\s+(Guard|Universe|Positivity)\s+Checking\b")


def coq_refusals(text: str) -> Shapes:
    """Refused Coq shapes: Admitted, admit (any spacing), Axiom/Parameter/Conjecture, disabled
    guard/universe/positivity checking, ``bypass_check``."""
    code = coq_code(text)
    shapes = [f"`{w}`" for w in _words(code, _COQ_WORDS)]
    shapes += [f"`Unset {m.group(1)} Checking`" for m in _COQ_UNSETS.finditer(code)]
    return shapes


_LEAN_WORDS = (
    "sorry",
    "sorryAx",
    "admit",
    "native_decide",
    "ofReduceBool",
    "axiom",
    "implemented_by",
    "extern",
    "unsafe",
    "run_tac",
)
_LEAN_OPTIONS = re.compile(r"debug\.skipKernelTC")
_LEAN_NOTATION = (
    "notation",
    "infix",
    "infixl",
    "infixr",
    "prefix",
    "postfix",
    "macro",
    "macro_rules",
    "syntax",
    "elab",
)


def lean_refusals(text: str) -> Shapes:
    """Refused Lean shapes: sorry, admit, native_decide, axiom, implemented_by, extern, unsafe,
    ``debug.skipKernelTC``, run_tac."""
    code = lean_code(text)
    shapes = [f"`{w}`" for w in _words(code, _LEAN_WORDS)]
    if _LEAN_OPTIONS.search(code):
        shapes.append("`debug.skipKernelTC`")
    # An imported module's notation and syntax reach the wrapper that restates the statement.
    shapes += [
        f"`{w}` (it would change how the trusted statement reads)"
        for w in _words(code, _LEAN_NOTATION)
    ]
    return shapes
