"""JSON bytes for every answer the service writes, whatever text it holds.

UTF-8 is written as is (compact, fast); text that cannot be UTF-8, a lone surrogate a client put
in an id or a key (strict JSON reads ``"\\ud800"``), falls back to ``\\u`` escapes, so echoing what
a client sent can never fail a whole batch.

``/v1/verify``'s body is written from each result's own text (``EpisodeResult.json_text``), the
same bytes ``json_bytes`` writes for the same results as dicts (a test compares them), at a
fraction of the cost; the rare body holding a lone surrogate is written by ``json_bytes``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.episodes import EpisodeResult

Result = EpisodeResult | dict[str, Any]
"""One item's result: the model, or its JSON (a verdict the idempotency store kept)."""


def _text(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def json_bytes(document: Any) -> bytes:
    """``document`` as compact JSON bytes; never raises on the text it holds."""
    try:
        return _text(document).encode()
    except UnicodeEncodeError:
        return json.dumps(document, separators=(",", ":")).encode()


def as_json(result: Result) -> dict[str, Any]:
    """A result as JSON data."""
    return result.to_json() if isinstance(result, EpisodeResult) else result


def results_bytes(results: Sequence[Result]) -> bytes:
    """``json_bytes({"results": [as_json(r) for r in results]})``, byte for byte."""
    texts = [r.json_text() if isinstance(r, EpisodeResult) else _text(r) for r in results]
    try:
        return f'{{"results":[{",".join(texts)}]}}'.encode()
    except UnicodeEncodeError:
        return json_bytes({"results": [as_json(r) for r in results]})
