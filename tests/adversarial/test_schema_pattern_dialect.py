"""Hack class: a string that passes a schema ``pattern`` only under Python's regex dialect.

JSON Schema patterns are ECMA-262: ``\\d`` is ``[0-9]`` and ``$`` is the end of the text. Python's
``re`` (jsonschema's default) lets ``\\d`` match any Unicode digit (``１``, ``٣``) and ``$`` match
before a final newline, so ``"12\\n"`` or ``"１２"`` would pass ``^\\d+$``. A catastrophic pattern
must stop at the time limit (inconclusive), never hang the verifier.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from tests.helpers import run_kind


def judge(tmp_path: Path, schema: Any, value: Any, config: Config | None = None) -> Any:
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "a.json").write_text(json.dumps(value))
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    return run_kind(
        "json_schema",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        config=config,
        artifact="a.json",
        schema="schema.json",
    )


DIGITS = {"type": "string", "pattern": "^\\d+$"}
WORD = {"type": "string", "pattern": "^\\w+$"}
KEYS = {"type": "object", "patternProperties": {"^\\d+$": {}}, "additionalProperties": False}

CASES = [
    (DIGITS, "１２", "does not match"),
    (DIGITS, "٣", "does not match"),
    (DIGITS, "12\n", "does not match"),
    (DIGITS, "12\n\n", "does not match"),
    (WORD, "naïve", "does not match"),
    (WORD, "ok\n", "does not match"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "abc\n", "does not match"),
    ({"type": "string", "pattern": "^(yes|no)$"}, "yes\n", "does not match"),
    (KEYS, {"１": 1}, "additional properties are not allowed ('１')"),
    (KEYS, {"1\n": 1}, "additional properties are not allowed"),
    (
        {"type": "object", "patternProperties": {"^\\d+$": {"type": "integer"}}},
        {"１": "x", "1": "y"},
        "$[\"1\"]: 'y' is not of type 'integer'",
    ),
]


@pytest.mark.parametrize(("schema", "value", "detail"), CASES, ids=lambda x: str(x)[:30])
def test_python_only_matches_are_refuted(
    tmp_path: Path, schema: Any, value: Any, detail: str
) -> None:
    out = judge(tmp_path, schema, value)
    assert out.status is Status.REFUTED, out.detail
    assert detail in out.detail


@pytest.mark.parametrize(
    ("schema", "value"),
    [(DIGITS, "0123"), (WORD, "snake_case1"), (KEYS, {"12": 1}), ({"pattern": "a$|[$]"}, "x$")],
)
def test_ascii_matches_pass(tmp_path: Path, schema: Any, value: Any) -> None:
    assert judge(tmp_path, schema, value).status is Status.VERIFIED


@pytest.mark.parametrize("pattern", ["^(a|a)*$", "^(a|aa)+$"])
def test_a_catastrophic_pattern_stops_at_the_limit(tmp_path: Path, pattern: str) -> None:
    started = time.monotonic()
    out = judge(tmp_path, {"pattern": pattern}, "a" * 40 + "!", Config(regex_timeout=0.2))
    assert out.status is Status.INCONCLUSIVE, out.detail
    assert "did not finish within 0.2s" in out.detail
    assert time.monotonic() - started < 10
