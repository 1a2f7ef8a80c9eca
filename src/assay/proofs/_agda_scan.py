"""Agda's refusal scan: shapes that let a proof assume its goal, refused before any judgment.

Read with Agda's own lexical rules (``_agda_lex``: character literals, escapes, nested comments,
pragmas, holes), the one reading the staging and the hole filler use too; text that lexer
refuses is refused here. A pre-filter: the real guard is ``--safe`` on the command line.
"""

from __future__ import annotations

from collections.abc import Iterable

from assay._config import DEFAULT_CONFIG
from assay.proofs._agda_imports import header_modules, import_refusals
from assay.proofs._agda_lex import (
    CLOSERS,
    KEYWORDS,
    LINE_ENDS,
    OPENERS,
    AgdaLexError,
    bracket_problem,
    code_only,
    module_header,
)
from assay.proofs._agda_lex import tokens as agda_tokens
from assay.proofs._agda_unsound import solution_refusals
from assay.proofs._paths import module_problem

Shapes = list[str]


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
        "--allow-exec",
        "--erased-cubical",
        "--no-load-primitives",
        "--local-interfaces",
        "--include-path",
        "--library",
        "--library-file",
    }
)


_AGDA_WORDS = ("postulate", "primTrustMe", "primEraseEquality")
_CANDIDATE_KEYWORDS = KEYWORDS - {
    "let", "in", "do", "where", "record", "forall", "quote", "quoteTerm", "quoteGoal",
    "quoteContext", "unquote", "tactic", "Set", "Prop",
}  # fmt: skip
"""Keywords that start or shape declarations: never inside a candidate term. ``let ... in`` is
an expression whose bindings stay local (and are scanned like the rest), so it is allowed;
``where`` only as ``λ where``; ``record`` for record expressions (a record *declaration* needs a
``where``)."""


def agda_refusals(
    text: str,
    allowed_options: Iterable[str] = (),
    header: str = "",
    library: str = DEFAULT_CONFIG.agda_stdlib,
    obligation: bool = False,
) -> Shapes:
    """Refused Agda shapes, read from Agda's own tokens (``_agda_lex``): postulates (``let
    postulate`` too), pragmas other than OPTIONS, OPTIONS flags not allowed (``--cubical`` and
    the unsafe ones never), ``primTrustMe``, text Agda's lexer refuses, a module header whose
    name is not a plain module name (it would name the file the solution is staged at), and
    imports outside the allow-list (``_agda_imports``: the trusted ``header``'s modules,
    ``library``'s (agda-stdlib's) ``--safe`` modules, Agda's safe builtins; never
    ``Agda.Primitive.Cubical``); and, in a whole-file solution (not an ``obligation``, the
    author's file a hole candidate fills), a data or record declaration or a module applied to
    arguments (``_agda_unsound``: the ingredients of known proofs of ``⊥``)."""
    try:
        found = agda_tokens(text)
    except AgdaLexError as exc:
        return [str(exc)]
    allowed = (set(allowed_options) | AGDA_HARMLESS_OPTIONS) - AGDA_ALWAYS_REFUSED_OPTIONS
    parts = {part for token in found for part in token.parts}
    shapes = [f"`{word}`" for word in _AGDA_WORDS if word in parts]
    for token in found:
        if token.kind != "pragma":
            continue
        body = token.pragma_words
        if not body:
            shapes.append("an empty pragma")
        elif body[0] != "OPTIONS":
            shapes.append(f"the {body[0]} pragma")
        else:
            shapes += [
                f"the option {flag}"
                for flag in body[1:]
                if flag not in allowed or flag.split("=")[0] in AGDA_ALWAYS_REFUSED_OPTIONS
            ]
    module = module_header(found)
    if module.problem is not None:
        shapes.append(module.problem)
    elif module.name is not None:
        problem = module_problem(module.name, ".agda")
        if problem is not None:
            shapes.append(problem)
    shapes += import_refusals(found, header_modules(header), library)
    if not obligation:
        shapes += solution_refusals(found, text)
    return list(dict.fromkeys(shapes))


def agda_candidate_refusals(term: str) -> Shapes:
    """A hole candidate is one term: read with Agda's lexer, its brackets nest as one closed
    group (so it cannot close the parentheses it is put in), and no line break, comment, pragma,
    declaration keyword or top-level ``;`` can ride in it."""
    if not term.strip():
        return ["an empty candidate"]
    shapes = agda_refusals(term)
    named = set(shapes)  # the words agda_refusals already named (a set: no scan is quadratic)
    if "\n" in term or any(end in term for end in LINE_ENDS):
        shapes.append("a line break")
    try:
        found = agda_tokens(term)
    except AgdaLexError:
        return shapes  # agda_refusals named the lexical error
    for token in found:
        if token.kind == "comment":
            shapes.append("a line comment" if token.text.startswith("--") else "a block comment")
        elif token.kind == "pragma":
            shapes.append("a pragma")
    problem = bracket_problem(found)
    if problem is not None:
        shapes.append(f"brackets that do not nest ({problem}): a candidate is one term")
    depth, previous = 0, ""
    for token in code_only(found):
        text = token.text if token.kind in ("word", "symbol") else ""
        if text in OPENERS:
            depth += 2 if text == "{{" else 1
        elif text in CLOSERS:
            depth -= 1
        elif text == ";" and depth <= 0:
            shapes.append("a declaration separator")
        elif token.kind == "word" and text in _CANDIDATE_KEYWORDS and f"`{text}`" not in named:
            shapes.append(f"the keyword `{text}` (a candidate is one term, not a declaration)")
        elif text == "where" and previous not in ("λ", "\\"):
            shapes.append("the keyword `where` (only `λ where` is a term)")
        previous = text
    return list(dict.fromkeys(shapes))
