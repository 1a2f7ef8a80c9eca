"""An answer check spawns no process and imports nothing per call."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from assay import CheckContext, Receipt, build_check

ANSWER_CHECKS = [
    ({"kind": "answer_number", "value": 42}, "The answer is 42."),
    ({"kind": "answer_number", "value": 0.5, "rel_tolerance": 0.01}, "1/2"),
    ({"kind": "answer_number", "value": 10, "unit": "m/s"}, "36 km/h"),
    ({"kind": "answer_one_of", "values": ["B"]}, "B"),
    ({"kind": "answer_equals", "value": "B"}, "B"),
    ({"kind": "answer_regex", "pattern": "^B$"}, "B"),
    ({"kind": "answer_key", "key": {"t": 1}}, '{"outputs": {"t": 1}}'),
    ({"kind": "web_receipt"}, "https://example.org/"),
]


def test_answer_checks_spawn_nothing_and_import_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    served = (Receipt(url="https://example.org/", status=200),)
    checks = [
        (build_check(spec), CheckContext(answer=answer, receipts=served))
        for spec, answer in ANSWER_CHECKS
    ]
    for check, ctx in checks:  # warm: the first unit check loads pint once
        check.run(ctx)

    def no_spawn(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an answer check spawned a process")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_spawn)
    before = set(sys.modules)
    for _ in range(3):
        for check, ctx in checks:
            outcome = check.run(ctx)
            assert outcome.status.value == "verified", (outcome.kind, outcome.detail)
    assert set(sys.modules) == before


def test_unitless_numbers_never_load_pint() -> None:
    code = (
        "import sys; from assay import build_check, CheckContext; "
        "c = build_check({'kind': 'answer_number', 'value': 3, 'tolerance': 0.1}); "
        "assert c.run(CheckContext(answer='3.05')).status.value == 'verified'; "
        "print('pint' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_context_init_is_the_dataclass_s() -> None:
    """CheckContext writes its fields in one step (hot path); its signature must stay exactly
    the fields, in order, with the same defaults, and it must stay frozen."""
    import dataclasses
    import inspect

    params = list(inspect.signature(CheckContext).parameters.values())
    fields = dataclasses.fields(CheckContext)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [f.default for f in fields]
    ctx = CheckContext("42", receipts=(Receipt(url="https://example.org/", status=200),))
    assert dataclasses.asdict(ctx)["answer"] == "42"
    assert dataclasses.replace(ctx, answer="43").receipts == ctx.receipts
    assert ctx == CheckContext(answer="42", receipts=ctx.receipts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.answer = "43"  # type: ignore[misc]


def test_build_check_takes_any_mapping() -> None:
    from types import MappingProxyType

    from assay import InvalidSpec

    check = build_check(MappingProxyType({"kind": "answer_number", "value": 42}))
    assert check.run(CheckContext(answer="42")).status.value == "verified"
    with pytest.raises(InvalidSpec, match="value"):
        build_check({"kind": "answer_number", "value": "42"})  # strict: no coercion
