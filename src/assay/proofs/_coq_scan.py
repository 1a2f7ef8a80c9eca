"""Coq's refusal scan: shapes that let a proof assume its goal, refused before any judgment.

The scanner blanks out comments and string literals as Coq's lexer reads them (``_coq_lex``:
``""`` is the only escape, strings are read inside comments, anything unterminated is refused),
then looks for the shapes as whole words. A pre-filter: the real guards are coqchk and
``Print Assumptions`` after the check.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from assay.proofs._coq_lex import CoqLexError
from assay.proofs._coq_lex import code_only as coq_code

Shapes = list[str]


def _words(code: str, words: Iterable[str]) -> Shapes:
    found = []
    for word in words:
        if re.search(rf"(?<![\w']){re.escape(word)}(?![\w'])", code):
            found.append(word)
    return found


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
    "native compute profiling (it writes files)": r"\bNativeCompute\s+Profil",
}
"""Commands that write, read or search files or load code: a solution has no business with
them, and a file written into the judgment folder could stand in for a trusted one (the trusted
steps byte-check the files assay wrote, so the judgment would then be refuted, never pass;
refused here so the reason is clear). Extraction and ``Print Universes`` to a file are refused
separately (``_extraction``, ``_universes_to_file``): they depend on the sentence around them."""
_PRINT_UNIVERSES = re.compile(r"\bPrint\s+(Sorted\s+)?Universes\b")
_COQ_EXTRACTION = re.compile(r"(?<![\w'.])Extraction(?![\w'])")
_COQ_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_COQ_REQUIRE = re.compile(r"\s*(From\s+\S+\s+)?Require\b")


def _sentence_ends(code: str) -> list[int]:
    """The offset just after each sentence-ending ``.``, in order (found once per scan, so that
    the sentence around a word is a binary search away and nothing is sliced or searched again
    per occurrence: no scan is quadratic in the file, however many words one sentence holds)."""
    return [end.end() for end in _COQ_SENTENCE_END.finditer(code)]


def _extraction(code: str, ends: list[int]) -> bool:
    """Whether any sentence uses an extraction command (``Extraction "file"``, ``Separate`` /
    ``Recursive Extraction [Library]``, ``Extraction TestCompile``, ``Set Extraction Output
    Directory``, ...): they write files or compile code. ``Require [Import] Extraction`` only
    loads the plugin and is allowed."""
    for found in _COQ_EXTRACTION.finditer(code):
        before = bisect.bisect_right(ends, found.start())
        if not _COQ_REQUIRE.match(code, ends[before - 1] if before else 0, found.start()):
            return True
    return False


def _universes_to_file(code: str, ends: list[int]) -> bool:
    """Whether a ``Print [Sorted] Universes`` sentence names a file (a string before the
    sentence ends): it writes that file."""
    printed = list(_PRINT_UNIVERSES.finditer(code))
    quotes = [quote.start() for quote in re.finditer('"', code)] if printed else []
    for found in printed:
        after = bisect.bisect_right(ends, found.end())
        stop = ends[after] - 1 if after < len(ends) else len(code)
        quote = bisect.bisect_left(quotes, found.end())
        if quote < len(quotes) and quotes[quote] < stop:
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
    ends = _sentence_ends(code)
    if _universes_to_file(code, ends):
        shapes.append("`Print Universes` to a file")
    if _extraction(code, ends):
        shapes.append("extraction (it writes files and compiles code)")
    return shapes
