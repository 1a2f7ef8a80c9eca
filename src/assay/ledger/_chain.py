"""The hash chain: how one row's hash is computed, and the walk that checks every row.

hash = sha256 of the canonical JSON (``assay._signed.canonical_json``) of
``[seq, kind, subject, problem, participant, at, body, prev_hash]``, where ``at`` and ``body``
are the stored texts. The body is stored as canonical JSON text already, so the row's canonical
encoding is assembled from it without parsing it again: the walk hashes exactly the bytes in the
store, which is what makes it fast (no JSON parsing per row) and exact (any edit to the text,
even one that means the same JSON, breaks the hash).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from assay._errors import InvalidInput
from assay.ledger._models import ChainReport

GENESIS = "0" * 64
"""The ``prev_hash`` of the first row."""

_string = json.encoder.encode_basestring_ascii
"""The encoder canonical_json applies to every string (ensure_ascii=True)."""


def at_text(at: datetime) -> str:
    """An aware datetime as stored: ISO-8601 UTC with microseconds, ``Z``-suffixed (sorts as
    text), e.g. ``2026-01-01T12:00:00.000000Z``."""
    return at.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_at(text: str) -> datetime:
    """The stored ``at`` text back as an aware UTC datetime."""
    return datetime.fromisoformat(text)


def body_text(body: dict[str, Any]) -> str:
    """The body's canonical JSON; InvalidInput naming ``body`` when it is not strict JSON."""
    try:
        return _canonical(body)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"not a strict JSON object: {exc}", where="body") from None


_canonical = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
).encode
"""``canonical_json`` with the encoder built once: ``json.dumps`` with these options builds a
new one per call, which costs as much as encoding a small body (every row of a batch has one).
A test holds the two equal."""


def _optional(text: str | None) -> str:
    return "null" if text is None else _string(text)


def row_hash(
    seq: int,
    kind: str,
    subject: str,
    problem: str | None,
    participant: str | None,
    at: str,
    body: str,
    prev_hash: str,
) -> str:
    """The row's hash; equal to ``canonical_digest([seq, kind, ..., json.loads(body), ...])``
    for a canonical ``body`` (a test holds the two together)."""
    encoded = (
        f"[{seq},{_string(kind)},{_string(subject)},{_optional(problem)},"
        f"{_optional(participant)},{_string(at)},{body},{_string(prev_hash)}]"
    )
    return hashlib.sha256(encoded.encode()).hexdigest()


Row = tuple[int, str, str, str | None, str | None, str, str, str, str]
"""(seq, kind, subject, problem, participant, at, body, prev_hash, hash), in that order."""

_CACHED = 100_000
"""Distinct kinds, problems and participants whose encodings the walk keeps at once."""


def walk(batches: Iterable[Sequence[Row]]) -> ChainReport:
    """Check rows (in batches, in seq order); the report names the first bad row.

    Each row's link is checked before its contents: a row that names the wrong predecessor was
    moved or had one deleted before it (its own hash may be fine); a row whose link is right and
    whose hash is not was edited in place. This is ``row_hash`` inlined, with the encodings of
    the few values that repeat (kind, problem, participant) remembered: the walk's cost is the
    driver's fetch plus one sha256 per row. Once a row's link holds, its ``prev_hash`` is the
    previous row's verified sha256 (or the genesis), 64 hex digits that JSON leaves as they are.
    """
    encode, sha256 = _string, hashlib.sha256
    known: dict[str | None, str] = {None: "null"}
    last_seq = 0
    last_hash = GENESIS
    count = 0
    for batch in batches:
        for seq, kind, subject, problem, participant, at, body, prev_hash, stored in batch:
            problem_text: str | None = None
            if prev_hash != last_hash:
                before = f"row {last_seq}" if last_seq else "the genesis"
                problem_text = (
                    f"row {seq}: prev_hash does not match {before} "
                    "(a row was deleted or rows were reordered)"
                )
            else:
                if len(known) > _CACHED:
                    known = {None: "null"}
                k = known.get(kind) or known.setdefault(kind, encode(kind))
                p = known.get(problem) or known.setdefault(problem, encode(str(problem)))
                q = known.get(participant) or known.setdefault(
                    participant, encode(str(participant))
                )
                encoded = f'[{seq},{k},{encode(subject)},{p},{q},{encode(at)},{body},"{prev_hash}"]'
                if sha256(encoded.encode()).hexdigest() != stored:
                    problem_text = f"row {seq} was edited: its hash does not match its contents"
                elif seq != last_seq + 1:
                    problem_text = (
                        f"row {seq} follows row {last_seq}: rows were renumbered "
                        "(its hash was recomputed; the chain was rewritten)"
                    )
            if problem_text is not None:
                return ChainReport(
                    intact=False,
                    rows=count,
                    head=last_hash if count else None,
                    first_bad_seq=seq,
                    problem=problem_text,
                )
            last_seq, last_hash = seq, stored
            count += 1
    return ChainReport(intact=True, rows=count, head=last_hash if count else None)
