"""JSON bytes for every answer the service writes, whatever text it holds.

UTF-8 is written as is (compact, fast); text that cannot be UTF-8, a lone surrogate a client put
in an id or a key (strict JSON reads ``"\\ud800"``), falls back to ``\\u`` escapes, so echoing what
a client sent can never fail a whole batch.
"""

from __future__ import annotations

import json
from typing import Any


def json_bytes(document: Any) -> bytes:
    """``document`` as compact JSON bytes; never raises on the text it holds."""
    try:
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(document, separators=(",", ":")).encode()
