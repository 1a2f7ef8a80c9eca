"""The hot path's shortcuts give exactly what the model path gives: a result written as text
without ``model_dump`` (``EpisodeResult.json_text``, ``results_bytes``), an episode built without
the dataclass's generated ``__init__``, and ``/v1/verify`` answering the same bytes as judging
each item in-process and encoding its ``to_json()`` (also on random items, valid and not).
Every item is read by ``_Item``'s validator: the hand-written reader of the common shape that
stood beside it was slower than pydantic's validator (svcspeed2), so it is gone."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from assay import Config
from assay._strict import loads_strict
from assay._wire import unvalidated
from assay.episodes import Episode, EpisodeResult, judge_item, parse_episode
from assay.executors._base import Job, judge_job
from assay.executors._batch import _job
from assay.service._encoding import as_json, json_bytes, results_bytes
from assay.status import Outcome, Report, Status

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


def test_an_episode_is_the_dataclass_its_fields_say() -> None:
    """``Episode.__init__`` fills the same fields, with the same defaults, as the generated one
    would; the episode stays frozen and its fingerprint is still computed when first asked."""
    episode = parse_episode(
        {"id": "a", "checks": [NUMBER], "answer": "4", "idempotency_key": "k"},
        root=None,
        config=Config(),
    )
    names = [f.name for f in dataclasses.fields(Episode)]
    assert names == ["id", "task", "idempotency_key", "runs_code", "body", "reads_files"]
    assert [getattr(episode, name) for name in names[:4]] == ["a", episode.task, "k", False]
    assert episode.body == {"checks": [NUMBER], "answer": "4"} and episode.reads_files is False
    assert Episode("b", episode.task, None, True, {}).reads_files is False
    assert dataclasses.replace(episode, id="c").id == "c"
    assert episode == dataclasses.replace(episode, body={})  # body is not compared
    with pytest.raises(dataclasses.FrozenInstanceError):
        episode.id = "x"  # type: ignore[misc]
    assert len(episode.fingerprint) == 64


# --- random items, valid and not: the fast paths against the model path ----------------------

_KINDS: list[dict[str, Any]] = [
    NUMBER,
    {"kind": "answer_number", "value": 2.5, "rel_tolerance": 1e-9},
    {"kind": "answer_number", "value": -(10**20), "tolerance": 3},
    {"kind": "answer_equals", "value": "Paris"},
    {"kind": "answer_json", "value": {"a": [1, 2.5]}},
    {"kind": "answer_number", "value": 4, "weight": 2.0, "description": "é"},
]
_BAD_CHECKS: list[Any] = [
    {"kind": "answer_number"},
    {"kind": "answer_number", "value": "4"},
    {"kind": "answer_number", "value": 4, "valu": 4},
    {"kind": "answer_number", "value": 4, "weight": 0},
    {"kind": "no_such_kind"},
    {"kind": 4},
    {},
    "answer_number",
    None,
    {"kind": "answer_number", "value": 10**400},
]
_TEXTS: list[Any] = [
    "4", "5", "4.0", "\\boxed{4}", "The answer is 4.", "4 or 5", "", "four", "٤", "４",
    "2.5", "-100000000000000000000", "1e20", "Paris", "paris", '{"a": [1, 2.5]}', "4 \ud800",
    "\u2028 4", "😀 4", "x" * 300, None, 4, 4.0, True, ["4"],
]  # fmt: skip
_IDS: list[Any] = ["a", "é ✓", "", "a" * 200, "a" * 201, "\ud800", 'q"\\', 7, None, True]
_MODES: list[Any] = [None, "all", "weighted", "ALL", 1, ["all"]]
_KEYS: list[Any] = [None, "k", "", "k" * 201, 3]


def _random_item(rng: random.Random) -> Any:
    """One item: mostly well formed, often with one field wrong or out of place."""
    if rng.random() < 0.03:
        return rng.choice(["not an object", 4, None, ["id"]])
    checks: Any = [rng.choice(_KINDS) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    if rng.random() < 0.15:
        checks[rng.randrange(len(checks))] = rng.choice(_BAD_CHECKS)
    if rng.random() < 0.03:
        checks = rng.choice([[], {}, "x", None, tuple(checks)])
    item: dict[str, Any] = {"id": rng.choice(_IDS) if rng.random() < 0.3 else f"i{rng.random()}"}
    if rng.random() < 0.1:
        item["task"] = {"checks": checks, "answer": rng.choice(_TEXTS)}
    else:
        item["checks"] = checks
    if rng.random() < 0.9:
        item["answer"] = rng.choice(_TEXTS)
    if rng.random() < 0.2:
        item["mode"] = rng.choice(_MODES)
    if rng.random() < 0.1:
        item["idempotency_key"] = rng.choice(_KEYS)
    if rng.random() < 0.05:
        item[rng.choice(["workspace", "receipts", "description", "surprise"])] = rng.choice(
            ["ws", [], "d", 1]
        )
    if rng.random() < 0.05:
        del item["id"]
    return item


_RANDOM = [_random_item(random.Random(seed)) for seed in range(400)]


def test_random_items_give_the_model_paths_results() -> None:
    """On random items (valid, invalid, odd types), the fast path's result (``from_json``, the
    text written directly) is byte for byte the model path's (encodability checked,
    ``model_dump`` then ``json.dumps``), and every status occurs."""
    config = Config()
    statuses = set()
    for index, data in enumerate(_RANDOM):
        where = f"items[{index}]"
        fast = judge_item(data, root=None, config=config, where=where, from_json=True)
        model = judge_item(data, root=None, config=config, where=where)
        assert fast.json_text() == _compact(model.to_json()), data
        assert results_bytes([fast]) == json_bytes({"results": [model.to_json()]}), data
        statuses.add(fast.status)
    assert statuses == set(Status)


def test_random_items_through_verify_give_the_model_paths_bytes(client: Client) -> None:
    """The same random items in one request: one result each, in order, the model path's bytes."""
    body = json_bytes({"items": _RANDOM})
    reply = client().post("/v1/verify", content=body)
    assert reply.status_code == 200, reply.text
    config = Config()
    sent = loads_strict(body)["items"]  # as the service reads them (a tuple is a list in JSON)
    want = [
        judge_item(data, root=None, config=config, where=f"items[{i}]").to_json()
        for i, data in enumerate(sent)
    ]
    assert reply.content == json_bytes({"results": want})


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


def test_a_batch_line_read_as_json_is_judged_as_the_model_path_judges_it() -> None:
    """``assay batch`` reads each line with the strict reader and judges it ``from_json``; the
    result line is the one a job checked for encodability gets, on the same random items."""
    config = Config()
    for index, data in enumerate(_RANDOM):
        sent = loads_strict(json_bytes(data))
        where = f"line {index + 1}"
        fast = judge_job(Job(sent, where, digest="d" * 64, from_json=True), None, config)
        model = judge_job(Job(sent, where, digest="d" * 64), None, config)
        assert fast == model, data
    assert _job(b'{"id": "a", "checks": []}', "line 1", set()).from_json  # a batch line's job
