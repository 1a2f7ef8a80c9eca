"""The hot path's shortcuts give exactly what the model path gives: an item read without the
model's validator (``_plain_item``), a result written as text without ``model_dump``
(``EpisodeResult.json_text``, ``results_bytes``), and ``/v1/verify`` answering the same bytes as
judging each item in-process and encoding its ``to_json()``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError
from starlette.testclient import TestClient

from assay import Config
from assay._wire import unvalidated
from assay.episodes import EpisodeResult, judge_item
from assay.episodes._item import _Item, _plain_item
from assay.service._encoding import as_json, json_bytes, results_bytes
from assay.status import Mode, Outcome, Report, Status

Client = Callable[..., TestClient]

NUMBER = {"kind": "answer_number", "value": 4}


def _compact(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _items() -> list[dict[str, Any]]:
    """Items of every status and many shapes of detail, evidence and text."""
    long_text = "x" * 5000
    return [
        {"id": "v", "checks": [NUMBER], "answer": "4"},
        {"id": "r", "checks": [NUMBER], "answer": "5"},
        {"id": "tol", "checks": [{**NUMBER, "value": 0.1, "tolerance": 1e-7}], "answer": "0.3"},
        {"id": "big", "checks": [{**NUMBER, "value": 10**30}], "answer": "1e30"},
        {"id": "frac", "checks": [{**NUMBER, "value": 1 / 3}], "answer": "1/3"},
        {"id": "none", "checks": [NUMBER]},  # inconclusive: no answer
        {"id": "two", "checks": [NUMBER], "answer": "4 or 5"},
        {"id": "unicode ✓ 数", "checks": [NUMBER], "answer": "réponse: ４"},
        {"id": 'quote " \\ \n\t\u0001', "checks": [NUMBER], "answer": '"4"'},
        {"id": "lone \ud800", "checks": [NUMBER], "answer": "4"},
        {"id": "answer-surrogate", "checks": [NUMBER], "answer": "4 \udcff"},
        {"id": "eq", "checks": [{"kind": "answer_equals", "value": "Paris"}], "answer": "paris"},
        {"id": "eq2", "checks": [{"kind": "answer_equals", "value": "Ünïcode"}], "answer": "x"},
        {
            "id": "json",
            "checks": [{"kind": "answer_json", "value": {"a": [1, 2.5]}}],
            "answer": '{"a": [1, 2.5]}',
        },
        {
            "id": "json-no",
            "checks": [{"kind": "answer_json", "value": {"a": [1, 2.5]}}],
            "answer": '{"a": [1, 2.5000001]}',
        },
        {"id": "long", "checks": [NUMBER], "answer": long_text},
        {
            "id": "weighted",
            "mode": "weighted",
            "checks": [NUMBER, {**NUMBER, "value": 5, "weight": 2.0}, {**NUMBER, "weight": 0.5}],
            "answer": "4",
        },
        {"id": "task", "task": {"checks": [NUMBER], "answer": "4", "mode": "all"}},
        {"id": "described", "checks": [NUMBER], "answer": "4", "description": "d"},
        {"id": "keyed", "checks": [NUMBER], "answer": "4", "idempotency_key": "k1"},
        # invalid items: error results whose message names the field
        {"id": "bad-kind", "checks": [{"kind": "no_such_kind"}], "answer": "4"},
        {"id": "bad-field", "checks": [{**NUMBER, "valu": 4}], "answer": "4"},
        {"id": "bad-mode", "checks": [NUMBER], "answer": "4", "mode": "ALL"},
        {"id": "", "checks": [NUMBER], "answer": "4"},
        {"id": "extra", "checks": [NUMBER], "answer": "4", "surprise": "\ud800"},
        {"id": "empty", "checks": [], "answer": "4"},
        {"id": "both", "checks": [NUMBER], "task": {"checks": [NUMBER]}},
        {"id": "path", "checks": [NUMBER], "answer": "4", "workspace": "ws"},
        {"id": 7, "checks": [NUMBER], "answer": "4"},
        "not an object",
    ]


def _results() -> list[EpisodeResult]:
    config = Config()
    judged = [
        judge_item(data, root=None, config=config, where=f"items[{i}]")
        for i, data in enumerate(_items())
    ]
    evidence: dict[str, Any] = {
        "nested": {"list": [1, 2.5, -0.0, 1e-7, 1e300, 10**40, True, None, "é\ud800"]},
        "nan": float("nan"),
        "inf": float("-inf"),
        "tuple": (1, "two"),
        "bytes": b"\x00\xff",
        "keys": {3: "int key", None: "none key"},
        "deep": [[[[{"a": "b"}]]]],
    }
    made = [
        Outcome.verified("passed", {"expected": 1.5, "got": 1.5}),
        Outcome.refuted("wrong \u2028 line separator", evidence),
        Outcome.inconclusive("a limit\nhit", {"limit": 2.0}),
        Outcome.error("assay failed: \ud83d lone high surrogate"),
    ]
    for status in Status:
        outcomes = tuple(o.with_kind(f"kind-{status.value}") for o in made)
        report = Report(status=status, score=None, outcomes=outcomes)
        judged.append(EpisodeResult.of(f"made-{status.value}", report))
    judged.append(EpisodeResult.invalid("inv", 'items[0].checks: é "quoted" \\ \x7f'))
    judged.append(
        EpisodeResult.of("no-kind", Report(status=Status.VERIFIED, score=1.0, outcomes=(made[0],)))
    )

    class Odd(Outcome):
        """An outcome of another type: written through the model."""

    odd = Odd(status=Status.VERIFIED, detail="odd")
    judged.append(unvalidated(EpisodeResult, {**judged[0].__dict__, "outcomes": (odd,)}))
    judged.append(unvalidated(EpisodeResult, {**judged[0].__dict__, "score": 1, "reward": 1}))
    judged.append(unvalidated(EpisodeResult, {**judged[0].__dict__, "score": 0.75, "reward": 0.75}))
    return judged


def test_a_result_text_is_the_model_dump_encoded() -> None:
    results = _results()
    statuses = {r.status for r in results}
    assert statuses == set(Status)
    for result in results:
        assert result.json_text() == _compact(result.to_json()), result.id


def test_results_bytes_are_json_bytes_of_the_dicts() -> None:
    results: list[EpisodeResult | dict[str, Any]] = list(_results())
    results.insert(3, {**results[0].to_json(), "id": "stored"})  # a verdict the store kept
    clean = [r for r in results if "\ud800" not in as_json(r)["id"]]
    for batch in (results, clean, clean[:1], []):
        assert results_bytes(batch) == json_bytes({"results": [as_json(r) for r in batch]})
    assert b"\\ud800" in results_bytes(results)  # a lone surrogate: the escaped form, whole
    assert "✓".encode() in results_bytes(clean)  # otherwise UTF-8 as is


def _model(data: dict[str, Any]) -> _Item | None:
    try:
        return _Item.model_validate(data)
    except ValidationError:
        return None


class _Text(str):
    """Text of another type: the model decides (strict mode)."""


ITEM_SHAPES: list[dict[str, Any]] = [
    {"id": "a", "checks": [NUMBER], "answer": "4"},
    {"id": "a", "checks": [NUMBER]},
    {"id": "a", "checks": []},
    {"id": "a" * 200, "checks": [NUMBER], "answer": "4"},
    {"id": "a" * 201, "checks": [NUMBER], "answer": "4"},
    {"id": "", "checks": [NUMBER]},
    {"id": "a", "checks": [NUMBER], "answer": None, "mode": None, "idempotency_key": None},
    {"id": "a", "checks": [NUMBER], "mode": "weighted"},
    {"id": "a", "checks": [NUMBER], "mode": "all"},
    {"id": "a", "checks": [NUMBER], "mode": "ALL"},
    {"id": "a", "checks": [NUMBER], "mode": Mode.WEIGHTED},
    {"id": "a", "checks": [NUMBER], "mode": 1},
    {"id": "a", "checks": [NUMBER], "mode": ["all"]},
    {"id": "a", "checks": [NUMBER], "idempotency_key": "k" * 200},
    {"id": "a", "checks": [NUMBER], "idempotency_key": "k" * 201},
    {"id": "a", "checks": [NUMBER], "idempotency_key": ""},
    {"id": "a", "checks": [NUMBER], "workspace": "ws", "description": "d"},
    {"id": "a", "checks": [NUMBER], "description": None},
    {"id": "a", "checks": [NUMBER], "description": 3},
    {"id": "a", "checks": [NUMBER], "answer": 4},
    {"id": "a", "checks": [NUMBER], "answer": b"4"},
    {"id": "a", "checks": [NUMBER], "answer": _Text("4")},
    {"id": _Text("a"), "checks": [NUMBER]},
    {"id": 1, "checks": [NUMBER]},
    {"id": True, "checks": [NUMBER]},
    {"id": None, "checks": [NUMBER]},
    {"checks": [NUMBER]},
    {"id": "a"},
    {"id": "a", "checks": None},
    {"id": "a", "checks": (NUMBER,)},
    {"id": "a", "checks": NUMBER},
    {"id": "a", "checks": ["x"]},
    {"id": "a", "checks": [{1: "x"}]},
    {"id": "a", "checks": [NUMBER], "task": None},
    {"id": "a", "task": {"checks": [NUMBER]}},
    {"id": "a", "checks": [NUMBER], "receipts": []},
    {"id": "a", "checks": [NUMBER], "receipts": None},
    {"id": "a", "checks": [NUMBER], "unknown": 1},
    {"id": "a \ud800", "checks": [NUMBER], "answer": "\udfff"},
    {"id": "a", "checks": [NUMBER], "answer": "é \udfff"},
    {"id": "é", "checks": [NUMBER], "answer": "é", "description": "\ud800"},
    {"id": "a", "checks": [{"kind": "answer_number", "value": "\ud800", "k\udfff": 1}]},
]


@pytest.mark.parametrize("data", ITEM_SHAPES, ids=range(len(ITEM_SHAPES)))
def test_a_plain_item_is_read_as_the_model_reads_it(data: dict[str, Any]) -> None:
    fast, model = _plain_item(data), _model(data)
    if fast is None:
        return  # the model reads it (and names what is wrong)
    assert model is not None, "the shortcut accepted what the model refuses"
    for name in _Item.model_fields:
        got, want = getattr(fast, name), getattr(model, name)
        assert got == want and type(got) is type(want), name


def test_the_common_shapes_take_the_shortcut() -> None:
    taken = [data for data in ITEM_SHAPES if _plain_item(data) is not None]
    assert len(taken) >= 8
    assert _plain_item({"id": "a", "checks": [NUMBER], "answer": "4"}) is not None


def test_verify_answers_the_bytes_of_judging_each_item_in_process(client: Client) -> None:
    items = _items()
    reply = client().post("/v1/verify", content=json.dumps({"items": items}).encode())
    assert reply.status_code == 200, reply.text
    config = Config()
    want = [
        judge_item(data, root=None, config=config, where=f"items[{i}]").to_json()
        for i, data in enumerate(items)
    ]
    assert reply.content == json_bytes({"results": want})
    statuses = {r["status"] for r in reply.json()["results"]}
    assert statuses == {s.value for s in Status}


def test_the_shortcut_route_keeps_the_rest_of_the_api(client: Client) -> None:
    c = client()
    assert c.get("/v1/verify").status_code == 405
    document = c.get("/openapi.json").json()
    assert "post" in document["paths"]["/v1/verify"]
    assert c.post("/v1/verify", content=b"{").status_code == 400
    assert c.post("/v1/verify", json={"items": [], "x": 1}).json() == {"detail": "x: unknown field"}
