"""The cheap pre-filter: shapes that let a proof assume its goal, refused before any judgment.

Agda is read with Agda's own lexical rules (``_agda_lex``: character literals, escapes, nested
comments, pragmas, holes), the one reading the staging and the hole filler use too; text that
lexer refuses is refused here. Lean is read by tokens the same way (``_lean_scan``). The Coq
scanner blanks out comments and string literals as Coq's lexer reads them (``_coq_lex``: ``""``
is the only escape, strings are read inside comments, anything unterminated is refused), then
looks for the shapes as whole words. This is a pre-filter: the real guards are the flags on
the command line (``--safe``) and the assumption audit after the check (``Print Assumptions``,
``#print axioms``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from assay.proofs import _lean_scan
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
from assay.proofs._coq_lex import CoqLexError
from assay.proofs._coq_lex import code_only as coq_code
from assay.proofs._paths import module_problem

Shapes = list[str]


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


def agda_refusals(text: str, allowed_options: Iterable[str] = (), header: str = "") -> Shapes:
    """Refused Agda shapes, read from Agda's own tokens (``_agda_lex``): postulates (``let
    postulate`` too), pragmas other than OPTIONS, OPTIONS flags not allowed (``--cubical`` and
    the unsafe ones never), ``primTrustMe``, text Agda's lexer refuses, a module header whose
    name is not a plain module name (it would name the file the solution is staged at), and
    imports outside the allow-list (``_agda_imports``: the trusted ``header``'s modules,
    agda-stdlib's ``--safe`` modules, Agda's safe builtins; never ``Agda.Primitive.Cubical``)."""
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
    shapes += import_refusals(found, header_modules(header))
    return list(dict.fromkeys(shapes))


def agda_candidate_refusals(term: str) -> Shapes:
    """A hole candidate is one term: read with Agda's lexer, its brackets nest as one closed
    group (so it cannot close the parentheses it is put in), and no line break, comment, pragma,
    declaration keyword or top-level ``;`` can ride in it."""
    if not term.strip():
        return ["an empty candidate"]
    shapes = agda_refusals(term)
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
        elif token.kind == "word" and text in _CANDIDATE_KEYWORDS and f"`{text}`" not in shapes:
            shapes.append(f"the keyword `{text}` (a candidate is one term, not a declaration)")
        elif text == "where" and previous not in ("λ", "\\"):
            shapes.append("the keyword `where` (only `λ where` is a term)")
        previous = text
    return list(dict.fromkeys(shapes))


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
_COQ_COMMANDS = {
    "`Declare ML Module` (it loads native code into the checker)": r"\bDeclare\s+ML\s+Module\b",
    "`Load` (it runs another file)": r"(?<![\w'.])Load\b",
    "`Redirect` (it writes files)": r"\bRedirect\b",
    "`Cd` (it changes the checker's folder)": r"(?<![\w'.])Cd\b",
    "a load path command (it changes where files are read from)": (
        r"\b(Add|Remove)\s+(Rec\s+)?(LoadPath|ML\s+Path)\b"
    ),
    "`Locate File` / `Locate Library` (they search the file system)": r"\bLocate\s+(File|Library)\b",
    "`Write State` / `Restore State` (they write or read files)": r"\b(Write|Restore)\s+State\b",
    "`Print Universes` to a file": r"\bPrint\s+(Sorted\s+)?Universes\b(?:(?!\.(?:\s|$))[\s\S])*\"",
    "native compute profiling (it writes files)": r"\bNativeCompute\s+Profil",
}
"""Commands that write, read or search files or load code: a solution has no business with
them, and a file written into the judgment folder could stand in for a trusted one (the trusted
steps byte-check the files assay wrote, so the judgment would then be refuted, never pass;
refused here so the reason is clear). Extraction is refused separately (``_extraction``)."""
_COQ_EXTRACTION = re.compile(r"(?<![\w'.])Extraction(?![\w'])")
_COQ_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_COQ_REQUIRE = re.compile(r"(From\s+\S+\s+)?Require\b")


def _extraction(code: str) -> bool:
    """Whether any sentence uses an extraction command (``Extraction "file"``, ``Separate`` /
    ``Recursive Extraction [Library]``, ``Extraction TestCompile``, ``Set Extraction Output
    Directory``, ...): they write files or compile code. ``Require [Import] Extraction`` only
    loads the plugin and is allowed."""
    for found in _COQ_EXTRACTION.finditer(code):
        ends = [end.end() for end in _COQ_SENTENCE_END.finditer(code, 0, found.start())]
        sentence = code[ends[-1] if ends else 0 : found.start()].strip()
        if not _COQ_REQUIRE.match(sentence):
            return True
    return False


def coq_refusals(text: str) -> Shapes:
    """Refused Coq shapes: Admitted, admit (any spacing), Axiom/Parameter/Conjecture, disabled
    guard/universe/positivity checking, ``bypass_check``, commands that write, read or search
    files or load plugins, extraction, and text Coq's lexer refuses (an unterminated string or
    comment). A pre-filter: ``Hypothesis`` and the other assumption forms are caught by coqchk."""
    try:
        code = coq_code(text)
    except CoqLexError as exc:
        return [str(exc)]
    shapes = [f"`{w}`" for w in _words(code, _COQ_WORDS)]
    shapes += [f"`Unset {m.group(1)} Checking`" for m in _COQ_UNSETS.finditer(code)]
    shapes += [shape for shape, pattern in _COQ_COMMANDS.items() if re.search(pattern, code)]
    if _extraction(code):
        shapes.append("extraction (it writes files and compiles code)")
    return shapes


def lean_refusals(text: str, imports: Iterable[str] = ()) -> Shapes:
    """Refused Lean shapes, read by tokens (``_lean_scan``); ``imports`` are the trusted
    header's imports, the only modules a solution may import."""
    return _lean_scan.refusals(text, imports)
