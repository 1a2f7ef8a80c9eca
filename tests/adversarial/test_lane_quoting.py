"""Terms reach the interaction lane exactly as written: no escape can end, extend or rewrite them.

Issue 17 item 5: ``--infer 'x\\'`` left Agda's command reader waiting for the rest of a string
(a 120 s hang), and ``--infer 'term\\&'`` was read as ``term`` (Haskell's empty escape), so the
answer was about a different term than the one echoed. Terms and paths are now quoted as
Haskell string literals (Agda reads commands with Haskell's ``read``), every character outside
printable ASCII as a numeric escape; what cannot be one line of printable text is refused.
Real Agda in bubblewrap; each question must come back well inside the lane's deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.proofs import AgdaLane, LaneError
from assay.proofs._lane import haskell_string
from tests.proofs.conftest import need

SOURCE = (
    "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
    "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' p = {! !}\n"
)


@pytest.fixture(scope="module")
def lane() -> Iterator[AgdaLane]:
    with AgdaLane(stdlib=False, timeout=60) as lane:
        yield lane


@pytest.fixture
def file(tmp_path: Path) -> Path:
    path = tmp_path / "Sym.agda"
    path.write_text(SOURCE)
    return path


@pytest.mark.parametrize(
    "term",
    [
        "x\\",  # a trailing backslash used to swallow the closing quote: a hang
        "p\\&",  # \& is Haskell's empty escape: it used to be read as `p`
        'p"',  # a quote used to end the string early
        'p" noRange "q',  # ... and let the rest be read as more of the command
        "p\\\\",
        "p\\n",
        "p\\955",
    ],
)
def test_escapes_are_not_interpreted(term: str, lane: AgdaLane, file: Path) -> None:
    """Each of these is a term Agda cannot type (not in scope as written): a quick LaneError,
    never an answer about `p` and never a wait for the deadline."""
    need("agda")
    start = time.monotonic()
    with pytest.raises(LaneError):
        lane.infer(file, 6, 10, term)
    assert time.monotonic() - start < 20


@pytest.mark.parametrize(
    ("term", "answer"),
    [("p", "x ≡ y"), ("λ q → q", "(q : _11) → _11"), ("\\ q → q", "(q : _11) → _11")],
)
def test_plain_and_unicode_terms_are_answered(
    term: str, answer: str, lane: AgdaLane, file: Path
) -> None:
    need("agda")
    assert lane.infer(file, 6, 10, term).replace("_12", "_11") == answer


@pytest.mark.parametrize("term", ["p\nq", "p\rq", "p\x00", "p\x1b[2J", "", "   ", "p" * 5000])
def test_what_is_not_one_printable_line_is_refused(term: str, lane: AgdaLane, file: Path) -> None:
    with pytest.raises(LaneError, match="term to infer"):
        lane.infer(file, 6, 10, term)


@pytest.mark.parametrize(
    "text",
    ["x\\", "p\\&", 'a"b', "λ → ∀ ≡", "\x00\x1b\n\t", "1\\&2", "\\955", "😀", "\udcff"],
)
def test_the_quoting_reads_back_exactly(text: str) -> None:
    """Haskell string syntax, checked against Python's reading of the same escapes (they agree on
    the forms used: backslash, quote and decimal escapes closed by ``\\&``)."""
    quoted = haskell_string(text)
    assert quoted.isascii() and "\n" not in quoted
    assert quoted.startswith('"') and quoted.endswith('"')
    body = quoted[1:-1]
    # Decode the Haskell escapes that haskell_string produces: \\, \", \NNN\&.
    decoded, i = [], 0
    while i < len(body):
        if body[i] != "\\":
            decoded.append(body[i])
            i += 1
        elif body[i + 1] in '\\"':
            decoded.append(body[i + 1])
            i += 2
        else:
            end = body.index("\\&", i)
            decoded.append(chr(int(body[i + 1 : end])))
            i = end + 2
    assert "".join(decoded) == text
