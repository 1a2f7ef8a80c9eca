"""``sat_assignment``: an assignment (the work) satisfies every clause of a DIMACS CNF formula.

The formula is the author's (verifier-side; a problem with it is ``inconclusive``), the
assignment is the work (a problem with it is ``refuted``). Every token is read strictly: a
literal is ``-?[1-9][0-9]*`` or the terminating ``0``, so ``+3``, ``03``, ``-0``, ``1_0``,
``3.0`` and ``１`` (which Python's ``int`` would quietly accept or turn into a terminator) are
refused, never reinterpreted.

Linear time with a low constant, in pure Python: the formula is checked and converted in bulk a
chunk at a time (and kept, by the sha256 of its bytes, for the next assignment checked against
it); each literal becomes one byte (true, not true, or clause end) through a table indexed by
literal, and one regular-expression scan over those bytes finds the first clause with no true
literal. Only that clause is then located in the text, for its line. A formula that cannot be
read is inconclusive whatever the assignment: a refusal of the assignment waits until the
formula is known to be well formed.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import sys
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._files import UnreadableFile, read_regular
from assay.checks._context import CheckContext
from assay.checks._kinds._common import shorten, workspace_text
from assay.checks._kinds._program import _outside_the_workspace
from assay.checks._registry import kind
from assay.checks._spec import NonBlank, Spec
from assay.status import Outcome


class SatSpec(Spec):
    """An assignment in the workspace and the verifier's DIMACS CNF formula it must satisfy."""

    verifier_fields = ("formula",)
    workspace_fields = ("artifact",)

    artifact: NonBlank
    """The assignment file, relative to the workspace (in a contract: the role's name), in SAT
    competition form: ``c`` comment lines, an optional ``s SATISFIABLE`` line, and ``v`` lines of
    literals ending with a terminating ``0``."""
    formula: NonBlank
    """The DIMACS CNF formula (``p cnf VARIABLES CLAUSES``), relative to the task file's folder
    (in a contract: the reference key); at most ``max_staged_mb`` MiB and 2^26 variables. Parsed
    once per process and reused for every assignment checked against the same bytes."""


MAX_VARIABLES = 1 << 26
"""Most variables a header may declare: the literal table takes two bytes per variable."""

_CHUNK = 1 << 20
"""Bytes of formula converted at a time: bounds the transient token lists, and how much text is
rescanned to locate the failing clause."""

_LITERAL_BYTES = b"0123456789-"
_SPACE = b" \t\r\n"
_TO_SPACE = bytes.maketrans(b"\t\r\n", b"   ")
_LEADING_ZERO = re.compile(rb" 0[^ ]")
_LEADING_ZERO_AT_START = re.compile(rb"0[^ ]")
_TOKEN = re.compile(rb"\S+")
_COMMENT_LINE = re.compile(rb"(?m)^[ \t]*c[^\n]*")
_END_MARK = re.compile(rb"(?m)^[ \t]*%")
_UNSATISFIED = re.compile(rb"(?:\A|\x02)\x00*\x02")
_TRUE, _CLAUSE_END = 1, 2


class _Malformed(Exception):
    """The formula cannot be read: inconclusive, naming the line."""


class _Refused(Exception):
    """The assignment is wrong in form or content: refuted."""

    def __init__(self, detail: str, evidence: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.evidence = evidence or {}


@kind("sat_assignment", SatSpec)
def sat_assignment(spec: SatSpec, ctx: CheckContext) -> Outcome:
    """The assignment ``artifact`` makes every clause of the DIMACS CNF ``formula`` true.

    Refuted, naming the problem: ``s UNSATISFIABLE``; a line that is not ``c``, ``s`` or ``v``;
    a token that is not a literal; a literal beyond the header's variable count; a variable given
    both ways; a missing terminating ``0`` or anything after it; or a clause with no true literal
    (the first one, by its 1-based index, its line in the formula and its literals). A variable
    the assignment leaves out is not true either way, so a clause of only such literals fails.
    A formula that cannot be read (no or a bad ``p cnf`` header, a clause count other than the
    header's, a literal outside the header's range, a last clause with no ``0``) is inconclusive,
    naming the line; SATLIB's ``%`` line ends a formula. Passing says this assignment satisfies
    this formula, nothing about how it was found.
    """
    formula_path = (ctx.base_dir or Path.cwd()) / spec.formula
    outside = _outside_the_workspace(ctx, {"formula": (spec.formula, formula_path.resolve())})
    if outside is not None:
        return outside
    cap = max(ctx.config.max_file_bytes, ctx.config.max_staged_mb * 1024 * 1024)
    try:
        formula = read_regular(formula_path, cap, "DIMACS formula")
    except UnreadableFile as exc:
        return Outcome.inconclusive(f"the formula {spec.formula!r}: {exc.strerror}")
    text = workspace_text(ctx, spec.artifact)
    if isinstance(text, Outcome):
        return text
    assignment = text.encode("utf-8")
    evidence: dict[str, Any] = {
        "formula_sha256": hashlib.sha256(formula).hexdigest(),
        "artifact_sha256": hashlib.sha256(assignment).hexdigest(),
    }
    try:
        parsed, values = _evaluate(formula, evidence["formula_sha256"], assignment)
    except _Malformed as exc:
        return Outcome.inconclusive(f"the formula {spec.formula!r} cannot be read: {exc}", evidence)
    except _Refused as exc:
        return Outcome.refuted(f"{spec.artifact!r}: {exc}", {**evidence, **exc.evidence})
    clauses = parsed.clauses
    evidence.update(variables=parsed.variables, clauses=clauses)
    # Without the "not true" bytes, a clause with no true literal is a clause end at the start
    # or right after another: two C-speed passes decide; the regex below only names the clause.
    ends = values.translate(None, b"\x00")
    if not ends.startswith(b"\x02") and b"\x02\x02" not in ends:
        return Outcome.verified(
            f"the assignment satisfies all {clauses} clauses of {spec.formula!r}", evidence
        )
    found = _UNSATISFIED.search(values)
    assert found is not None
    end = found.end() - 1
    start = values.rfind(bytes([_CLAUSE_END]), 0, end) + 1
    index = values.count(bytes([_CLAUSE_END]), 0, end) + 1
    line = _token_line(formula[parsed.start :], parsed, start)
    stop = values.find(bytes([_CLAUSE_END]), start)
    literals = parsed.literals[start:stop].tolist()
    shown = " ".join(map(str, literals[:20])) + (" ..." if len(literals) > 20 else "")
    evidence.update(clause=index, line=line, literals=literals[:64], literal_count=len(literals))
    return Outcome.refuted(
        f"clause {index} (line {line} of the formula: {shown or 'the empty clause'}) is not "
        "satisfied: none of its literals is true under the assignment (a variable it leaves out "
        "is true neither way)",
        evidence,
    )


def _natural(token: bytes) -> int | None:
    """A canonical non-negative decimal (no sign, no leading zero), or None."""
    if not token.isdigit() or (token[:1] == b"0" and token != b"0") or len(token) > 18:
        return None
    return int(token)


def _header(formula: bytes) -> tuple[int, int, bytes, int]:
    """(variables, clauses, the text after the header, the line number that text starts on)."""
    offset, line = 0, 1
    while offset < len(formula):
        end = formula.find(b"\n", offset)
        end = len(formula) if end < 0 else end
        text = formula[offset:end].strip()
        if not text or text.startswith(b"c"):
            offset, line = end + 1, line + 1
            continue
        parts = text.split()
        if parts[0] != b"p":
            raise _Malformed(f"line {line}: expected the 'p cnf VARIABLES CLAUSES' header first")
        numbers = [_natural(part) for part in parts[2:]]
        if len(parts) != 4 or parts[1] != b"cnf" or None in numbers:
            raise _Malformed(f"line {line}: the header must be 'p cnf VARIABLES CLAUSES'")
        variables, clauses = numbers[0], numbers[1]
        assert variables is not None and clauses is not None
        if variables > MAX_VARIABLES:
            raise _Malformed(f"line {line}: more than {MAX_VARIABLES} variables are not supported")
        return variables, clauses, formula[end + 1 :], line + 1
    raise _Malformed("there is no 'p cnf VARIABLES CLAUSES' header")


def _line_of(body: bytes, first_line: int, offset: int) -> int:
    return first_line + body.count(b"\n", 0, offset)


def _clean_body(body: bytes, first_line: int) -> bytes:
    """The clauses' text: comment lines blanked (offsets kept), cut at a SATLIB ``%`` line,
    and checked to hold only canonical integers."""
    if body.translate(None, _LITERAL_BYTES + _SPACE):
        end = _END_MARK.search(body)
        if end is not None:
            body = body[: end.start()]
        body = _blank_comments(body)
        stray = re.search(rb"[^-0-9 \t\r\n]", body)
        if stray is not None:
            raise _Malformed(
                f"line {_line_of(body, first_line, stray.start())}: unexpected "
                f"{_quote(body[stray.start() : stray.start() + 1])} (clauses are integers)"
            )
    bad = _first_noncanonical(body)
    if bad is not None:
        raise _Malformed(
            f"line {_line_of(body, first_line, bad[0])}: {_quote(bad[1])} is not a literal"
        )
    return body


def _blank_comments(text: bytes) -> bytes:
    """Comment lines turned to spaces of the same length: a byte offset means the same in the
    cleaned text as in the file, so a clause is found again without cleaning it all."""
    return _COMMENT_LINE.sub(lambda found: b" " * (found.end() - found.start()), text)


def _first_noncanonical(text: bytes) -> tuple[int, bytes] | None:
    """(offset, token) of the first token that is not ``-?[1-9][0-9]*`` or ``0``, in text of
    digits, ``-`` and whitespace. Bulk counts and searches rule out every other spelling (a
    dash that does not lead a token or is not followed by 1-9, a leading zero); only when one
    fails are the tokens walked, to name the first."""
    spaced = text.translate(_TO_SPACE)  # one copy: a formula can be hundreds of MiB
    leading = spaced[:1] == b"-"
    if (
        spaced.count(b" -") + leading == spaced.count(b"-")
        and all(needle not in spaced for needle in (b"-0", b"--", b"- "))
        and not spaced.endswith(b"-")
        and _LEADING_ZERO.search(spaced) is None
        and _LEADING_ZERO_AT_START.match(spaced) is None
    ):
        return None
    for token in _TOKEN.finditer(text):
        if not _is_literal(token.group()):
            return token.start(), token.group()
    return None  # pragma: no cover - the bulk checks found a token the walk did not


def _quote(token: bytes) -> str:
    return repr(shorten(token.decode("utf-8", "replace"), 40))


@dataclass(frozen=True)
class _Formula:
    """A formula read and found well formed: every clause's literals, each clause ending in 0."""

    variables: int
    clauses: int
    literals: array[int]
    chunks: tuple[tuple[int, int, int], ...]
    """(token index, byte offset from ``start``, line number) where each chunk starts."""
    start: int
    """Where the clauses' text starts in the formula's bytes."""


_CACHE: OrderedDict[str, _Formula] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHE_LITERALS = 1 << 24
"""Literals kept in memory across checks (4 bytes each): a formula checked against many
assignments (one reference, many submissions) is read and parsed once, and found by the
sha256 of its bytes, so a changed file is never mistaken for the cached one."""


def _evaluate(formula: bytes, digest: str, assignment: bytes) -> tuple[_Formula, bytes]:
    """The formula, and one byte per literal of it (1: true, 0: not true, 2: a clause's end).

    A formula seen before (same sha256) is not read again. A new one is checked and converted
    in the same pass that evaluates it; the assignment's refusal, if any, waits until the
    formula is known to be well formed, so a broken formula (say, a wrong header) is
    inconclusive and never refutes the work.
    """
    with _CACHE_LOCK:
        parsed = _CACHE.get(digest)
        if parsed is not None:
            _CACHE.move_to_end(digest)
    if parsed is not None:
        table = _table(parsed.variables, _true_literals(assignment, parsed.variables))
        return parsed, bytes(map(table.__getitem__, parsed.literals))
    variables, clauses, body, first_line = _header(formula)
    start = len(formula) - len(body)
    body = _clean_body(body, first_line)
    refusal: _Refused | None = None
    try:
        true = _true_literals(assignment, variables)
    except _Refused as exc:
        true, refusal = set(), exc
    parsed, values = _parse(variables, clauses, body, (start, first_line), _table(variables, true))
    if len(parsed.literals) <= CACHE_LITERALS:
        with _CACHE_LOCK:
            _CACHE[digest] = parsed
            while sum(len(f.literals) for f in _CACHE.values()) > CACHE_LITERALS:
                _CACHE.popitem(last=False)
    if refusal is not None:
        raise refusal
    return parsed, values


def _table(variables: int, true: set[int]) -> bytearray:
    """Indexed by literal (a negative one from the end, into its own slot): 1 when it is true;
    index 0, the clause end, holds 2."""
    table = bytearray(2 * variables + 1)
    table[0] = _CLAUSE_END
    for literal in true:
        table[literal] = _TRUE
    return table


def _parse(
    variables: int, clauses: int, body: bytes, where: tuple[int, int], table: bytearray
) -> tuple[_Formula, bytes]:
    """The formula's literals and their values under ``table``, after checking every literal's
    range, the clause count and the last clause's 0; _Malformed names the line of a problem.
    ``where``: the byte offset and line number at which ``body`` starts in the formula."""
    start, first_line = where
    literals: array[int] = array("i")
    values = bytearray()
    chunks: list[tuple[int, int, int]] = []
    offset, line = 0, first_line
    while offset < len(body):
        stop = body.find(b"\n", offset + _CHUNK)
        stop = len(body) if stop < 0 else stop + 1
        chunks.append((len(literals), offset, line))
        line += body.count(b"\n", offset, stop)
        chunk = list(map(int, body[offset:stop].split()))
        if chunk and (max(chunk) > variables or min(chunk) < -variables):
            wrong = next(x for x in chunk if abs(x) > variables)
            at = _token_offset(body, offset, chunk.index(wrong))
            raise _Malformed(
                f"line {_line_of(body, first_line, at)}: literal {wrong} is outside the "
                f"header's {variables} variables"
            )
        literals.fromlist(chunk)
        values += bytes(map(table.__getitem__, chunk))
        offset = stop
    parsed = _Formula(variables, clauses, literals, tuple(chunks), start)
    if literals and literals[-1] != 0:
        first = len(literals) - 1
        while first > 0 and literals[first - 1] != 0:
            first -= 1
        raise _Malformed(
            f"line {_token_line(body, parsed, first)}: the last clause has no terminating 0"
        )
    found = values.count(_CLAUSE_END)
    if found != clauses:
        raise _Malformed(f"the header declares {clauses} clauses; the formula has {found}")
    return parsed, bytes(values)


def _token_line(body: bytes, parsed: _Formula, token: int) -> int:
    """The line of token number ``token`` of the clauses' text (raw or cleaned: offsets are the
    same); only the chunk holding it is cleaned and rescanned."""
    chunk = bisect.bisect_right(parsed.chunks, (token, sys.maxsize, 0)) - 1
    first_token, offset, line = parsed.chunks[chunk]
    following = parsed.chunks[chunk + 1][1] if chunk + 1 < len(parsed.chunks) else len(body)
    text = _blank_comments(body[offset:following])
    for number, found in enumerate(_TOKEN.finditer(text), start=first_token):
        if number == token:
            return line + text.count(b"\n", 0, found.start())
    return line


def _token_offset(body: bytes, offset: int, skip: int) -> int:
    for number, token in enumerate(_TOKEN.finditer(body, offset)):
        if number == skip:
            return token.start()
    return len(body)


def _true_literals(assignment: bytes, variables: int) -> set[int]:
    """The literals the assignment makes true; _Refused says what is wrong with it."""
    lines: list[tuple[int, list[bytes]]] = []
    status: int | None = None
    for number, raw in enumerate(assignment.split(b"\n"), start=1):
        parts = raw.split()
        if not parts or parts[0] == b"c":
            continue
        if parts[0] == b"s":
            said = b" ".join(parts[1:])
            if status is not None:
                raise _Refused(f"line {number}: a second 's' line (the first is line {status})")
            if said != b"SATISFIABLE":
                raise _Refused(
                    f"line {number}: the status line says {_quote(b's ' + said)}; "
                    "an assignment must say 's SATISFIABLE' (or nothing)"
                )
            status = number
        elif parts[0] == b"v":
            lines.append((number, parts[1:]))
        else:
            raise _Refused(
                f"line {number}: expected a 'c', 's' or 'v' line, found {_quote(raw.strip())}"
            )
    if not lines:
        raise _Refused("there is no 'v' line: give the literals on 'v' lines ending with 0")
    tokens = [token for _, parts in lines for token in parts]
    starts = list(_cumulative(len(parts) for _, parts in lines))

    def line_of(index: int) -> int:
        return lines[bisect.bisect_right(starts, index) - 1][0]

    widest = len(str(variables)) + 1
    joined = b" ".join(tokens)
    bulk_ok = (
        not joined.translate(None, _LITERAL_BYTES + b" ")
        and _first_noncanonical(joined) is None
        and max(map(len, tokens), default=0) <= widest
    )
    bad = None if bulk_ok else _first_bad(tokens, widest)
    if bad is not None:
        token = tokens[bad]
        if _is_literal(token):
            raise _Refused(
                f"line {line_of(bad)}: literal {shorten(token.decode(), 40)} is out of range "
                f"(the formula has {variables} variables)",
                {"literal_line": line_of(bad)},
            )
        raise _Refused(
            f"line {line_of(bad)}: {_quote(token)} is not a literal "
            "(a literal is a non-zero integer like 7 or -7; 0 ends the list)"
        )
    literals = list(map(int, tokens))
    if 0 not in literals:
        raise _Refused("the 'v' lines do not end with the terminating 0")
    zero = literals.index(0)
    if zero != len(literals) - 1:
        raise _Refused(
            f"line {line_of(zero + 1)}: {_quote(tokens[zero + 1])} comes after the terminating 0 "
            f"(line {line_of(zero)}); nothing may follow it"
        )
    del literals[-1]
    if literals and (max(literals) > variables or min(literals) < -variables):
        index = next(i for i, x in enumerate(literals) if abs(x) > variables)
        raise _Refused(
            f"line {line_of(index)}: literal {literals[index]} is out of range "
            f"(the formula has {variables} variables)",
            {"literal_line": line_of(index)},
        )
    true = set(literals)
    both = [x for x in true if x > 0 and -x in true]
    if both:
        variable = min(both)
        raise _Refused(
            f"variable {variable} is given both ways ({variable} and {-variable}): an assignment "
            "makes each variable true or false, not both",
            {"variable": variable},
        )
    return true


def _first_bad(tokens: list[bytes], widest: int) -> int | None:
    """The index of the first token that is not a literal or is longer than any in range (so a
    thousand-digit number is never converted)."""
    for index, token in enumerate(tokens):
        if len(token) > widest or not _is_literal(token):
            return index
    return None


def _is_literal(token: bytes) -> bool:
    """``-?[1-9][0-9]*`` or ``0``: the only spellings read, so no two spellings mean one value."""
    digits = token[1:] if token[:1] == b"-" else token
    return digits.isdigit() and (digits[:1] != b"0" or token == b"0")


def _cumulative(counts: Any) -> Any:
    total = 0
    for count in counts:
        yield total
        total += count
