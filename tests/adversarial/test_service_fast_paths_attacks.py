"""Attacks on the reward service's fast paths (svcspeed): wherever a shortcut stands beside the
model path, a hostile client or a reward-hacking policy looks for an input on which the two
disagree: an item the shortcut accepts that the model refuses (or the reverse), a field read
differently, response bytes that differ from ``json.dumps(model.to_json())``, a combined status
or score that changed, a route rule the plain Starlette route skips.

Every case is compared against the model path itself: ``parse_episode`` with
``from_json=False`` (the model reads every item: the hand-written reader is gone), ``to_json()``
encoded by ``json``, a reference copy of ``combine`` and of the strict reader's duplicate check
as they were before the change, and the FastAPI route with the plain route removed. Two findings, both fixed and kept
as tests: ``combine`` read an outcome of an unknown status (one built with ``model_construct``)
as verified, and ``Outcome.with_kind`` stopped validating what a kind returned (a status as
text scored 0.0 in mode weighted). Every other attack failed; each is a passing test.
"""

from __future__ import annotations

import gzip
import json
import math
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from pydantic import ValidationError
from starlette.routing import Route
from starlette.testclient import TestClient

from assay import Config
from assay._errors import InvalidInput
from assay._strict import StrictJSONError, loads_strict
from assay.checks import CheckContext
from assay.checks._engine import Check, run_checks
from assay.checks._registry import Kind
from assay.checks._spec import Spec
from assay.episodes import Episode, EpisodeResult, judge_item, parse_episode
from assay.service import Settings, create_app
from assay.service._encoding import json_bytes
from assay.status import Mode, Outcome, Report, Status, combine

CONFIG = Config()
N = {"kind": "answer_number", "value": 4}
FIVE = {"kind": "answer_number", "value": 5}


# --- the model path, as it was before the shortcuts -------------------------------------------


def _model_parse(data: Any, **options: Any) -> Episode:
    """``parse_episode`` with the JSON-encodability check (every item is read by ``_Item``'s
    validator: the hand-written reader of the common shape is gone, svcspeed2)."""
    return parse_episode(data, config=CONFIG, from_json=False, **options)


def _model_judge(data: Any, where: str = "item") -> EpisodeResult:
    return judge_item(data, root=None, config=CONFIG, where=where)


def _view(episode: Episode) -> dict[str, Any]:
    """Everything a parsed episode decides, in comparable form."""
    context = episode.task.context
    return {
        "id": (type(episode.id), episode.id),
        "key": (type(episode.idempotency_key), episode.idempotency_key),
        "mode": (type(episode.task.mode), episode.task.mode),
        "answer": (type(context.answer), context.answer),
        "workspace": context.workspace,
        "receipts": context.receipts,
        "checks": [
            (check.kind.name, type(check.spec), check.spec.model_dump())
            for check in episode.task.checks
        ],
        "runs_code": episode.runs_code,
        "reads_files": episode.reads_files,
        "body": json.dumps(episode.body, sort_keys=True),
        "fingerprint": episode.fingerprint,
    }


def _outcome(parse: Callable[[], Episode]) -> tuple[str, Any]:
    try:
        return "ok", _view(parse())
    except InvalidInput as exc:
        return "refused", str(exc)


def _compact(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


# --- hostile item shapes ----------------------------------------------------------------------

IDS: list[Any] = [
    "a", "", "a" * 200, "a" * 201, "é" * 200, "😀" * 200, "😀" * 201, "\ud800", "a\udfff",
    None, 1, 0, True, False, 1.5, [], {}, "x\x00", "\u2028", "ǅ", "ﬁ", "\ufeff", "\u00c5", "A\u030a", "\u212b",
]  # fmt: skip
ANSWERS: list[Any] = [
    "4", "", None, 4, 4.0, True, ["4"], {"a": 1}, "\ud800", "٤", "４", "4\x00", "4 or 5",
    "1e400", '{"outputs": {"a": [1, 2.5]}}', '{"outputs": {"a": [1, 2.5, "\ud800"]}}',
    '{"outputs": {"a": [1, 2.5], "a": 3}}', "\ud83d\ude00 4", "😀 4", "x" * 3000, "4\udfff",
]  # fmt: skip
MODES: list[Any] = [
    "all", "weighted", "ALL", "Weighted", "", None, 0, 1, True, ["all"], "any", " all", "all\x00",
    "\ud800", {"value": "all"}, "ａｌｌ",
]  # fmt: skip
KEYS: list[Any] = [
    None, "", "k", "k" * 200, "k" * 201, 1, True, "\ud800", "é" * 201, "😀" * 200, [], 0.0
]  # fmt: skip
DESCRIPTIONS: list[Any] = [None, "", "d", 1, "\ud800", True, ["d"], "é\u2028"]
CHECK_LISTS: list[Any] = [
    [N], [], None, N, "x", [None], [[N]], [{"kind": "answer_number"}], [{**N, "weight": 2.0}],
    [{**N, "weight": 0}], [{**N, "weight": -1}], [{**N, "weight": True}], [N, {**FIVE, "weight": 3}],
    [{"kind": "answer_equals", "value": "Paris"}], [{"kind": "answer_key", "key": {"a": [1, 2.5]}}],
    [{"kind": "answer_one_of", "values": ["4", "٤"]}], [{"kind": "answer_regex", "pattern": "^4$"}],
    [{"kind": "answer_regex", "pattern": "("}], [{**N, "unit": "m"}], [{**N, "rel_tolerance": 0.1}],
    [{"kind": "answer_number", "value": True}], [{"kind": "answer_number", "value": 10**30}],
    [{"kind": "answer_number", "value": 4, "tolerance": 0.5}], [{"kind": "ANSWER_NUMBER", "value": 4}],
    [{"kind": "answer_number", "value": "4"}], [{**N, "extra": 1}], [{**N, "\ud800": 1}],
    [{"kind": "answer_number\ud800", "value": 4}], [{"kind": "python", "code": "print(1)"}],
    [{"kind": "file_exists", "path": "a"}], [{1: "x"}], [(N,)], [{"kind": ["answer_number"]}],
]  # fmt: skip
TASKS: list[Any] = [
    None, {"checks": [N]}, {"checks": [N], "answer": "4"}, {"checks": [N], "mode": "weighted"},
    {"checks": [N], "x": 1}, {"checks": []}, {}, "task", [], {"checks": [N], "task": {"checks": [N]}},
]  # fmt: skip
EXTRAS: list[tuple[str, Any]] = [
    ("label_does_not_fit", "x"), ("label_does_not_fit", 1), ("label_does_not_fit", None),
    ("unknown", 1), ("ID", "x"), ("Checks", [N]), ("schema", "x"), ("receipts", None),
    ("receipts", []), ("receipts", [{}]), ("task", None), ("weight", 1),
]  # fmt: skip


def _shapes() -> list[dict[str, Any]]:
    """One field varied at a time from a valid item, then random mixes of every pool."""
    base = {"id": "a", "checks": [N], "answer": "4"}
    shapes: list[dict[str, Any]] = [dict(base)]
    for name, pool in (
        ("id", IDS),
        ("answer", ANSWERS),
        ("mode", MODES),
        ("idempotency_key", KEYS),
        ("description", DESCRIPTIONS),
        ("checks", CHECK_LISTS),
        ("workspace", [None, "", "ws", 1, "\ud800"]),
    ):
        shapes.extend({**base, name: value} for value in pool)
    shapes.extend({k: v for k, v in base.items() if k != name} for name in base)
    shapes.extend({"id": "t", "task": task} for task in TASKS)
    shapes.extend({**base, "task": task} for task in TASKS)
    shapes.extend({**base, key: value} for key, value in EXTRAS)
    chance = random.Random(20261202)
    pools: list[tuple[str, list[Any], float]] = [
        ("id", IDS, 0.95), ("checks", CHECK_LISTS, 0.9), ("answer", ANSWERS, 0.85),
        ("mode", MODES, 0.3), ("idempotency_key", KEYS, 0.25), ("description", DESCRIPTIONS, 0.2),
        ("task", TASKS, 0.1),
    ]  # fmt: skip
    for _ in range(120):
        mixed = {name: chance.choice(pool) for name, pool, p in pools if chance.random() < p}
        if chance.random() < 0.1:
            key, value = chance.choice(EXTRAS)
            mixed[key] = value
        order = list(mixed)
        chance.shuffle(order)
        shapes.append({key: mixed[key] for key in order})
    return shapes


SHAPES = _shapes()


@pytest.mark.parametrize("data", SHAPES, ids=range(len(SHAPES)))
def test_the_shortcut_parses_every_item_as_the_model_does(data: dict[str, Any]) -> None:
    """Accepted by both with every field, type, check, body and fingerprint equal, or refused by
    both with the same message naming the same field."""
    fast = _outcome(lambda: parse_episode(data, root=None, config=CONFIG, from_json=True))
    model = _outcome(lambda: _model_parse(data, root=None))
    assert fast == model


def _answer_only(data: dict[str, Any]) -> bool:
    text = json.dumps(data, default=repr)
    return '"python"' not in text and "file_exists" not in text


@pytest.mark.parametrize(
    "data", [d for d in SHAPES if _answer_only(d)], ids=lambda d: str(d.get("id"))[:20]
)
def test_the_shortcut_judges_every_item_as_the_model_does(data: dict[str, Any]) -> None:
    """The verdict, score, reward and outcomes, and the bytes written for them."""
    fast = judge_item(data, root=None, config=CONFIG, from_json=True)
    model = _model_judge(data)
    assert fast.to_json() == model.to_json()
    assert fast.json_text() == _compact(model.to_json())


@pytest.mark.parametrize(
    "data",
    [
        {"id": "w", "checks": [N], "answer": "4", "workspace": "ws"},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "ws/"},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "./ws"},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "."},
        {"id": "w", "checks": [N], "answer": "4", "workspace": ""},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "../ws"},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "/etc"},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "missing"},
        {"id": "w", "checks": [N], "answer": "4", "workspace": "ws\x00"},
        {"id": "w", "checks": [{"kind": "file_exists", "path": "a"}], "workspace": "ws"},
        {"id": "w", "checks": [{"kind": "sql", "database": "db.sqlite", "query": "select 1"}]},
    ],
)
def test_paths_are_read_alike_with_a_root(tmp_path: Path, data: dict[str, Any]) -> None:
    (tmp_path / "ws").mkdir()
    fast = _outcome(lambda: parse_episode(data, root=tmp_path, config=CONFIG, from_json=True))
    model = _outcome(lambda: _model_parse(data, root=tmp_path))
    assert fast == model


# --- from_json: data read by loads_strict always encodes ----------------------------------------

STRICT_TEXTS = [
    '{"id":"a","checks":[{"kind":"answer_number","value":4}],"answer":"4"}',
    '{"id":"a","checks":[{"kind":"answer_number","value":1e308}],"answer":"1e308"}',
    '{"id":"a","checks":[{"kind":"answer_number","value":-0.0}],"answer":"0"}',
    '{"id":"a","checks":[{"kind":"answer_number","value":' + "9" * 4000 + '}],"answer":"4"}',
    '{"id":"a","checks":[{"kind":"answer_key","key":{"t":'
    + "[" * 400
    + "]" * 400
    + '}}],"answer":"{\\"outputs\\": {\\"t\\": []}}"}',
    '{"id":"\\ud800","checks":[{"kind":"answer_equals","value":"\\udfff"}],"answer":"\\udfff"}',
    '{"id":"a","checks":[{"kind":"answer_key","key":{"\\ud800":1}}],"answer":"{}"}',
    '{"id":"a","checks":[{"kind":"answer_number","value":4}],"answer":"4","description":"\\u0000"}',
    '{"id":"a","checks":[{"kind":"answer_number","value":4}],"answer":"4","idempotency_key":"k"}',
    '{"id":"a","checks":[{"kind":"answer_number","value":5e-324}],"answer":"5e-324"}',
]


@pytest.mark.parametrize("text", STRICT_TEXTS, ids=range(len(STRICT_TEXTS)))
def test_skipping_the_encode_check_changes_nothing_for_strict_json(text: str) -> None:
    """``from_json=True`` skips the check that the data encodes; on anything the strict reader
    returns, that check could never have refused."""
    data = loads_strict(text)
    fast = _outcome(lambda: parse_episode(data, root=None, config=CONFIG, from_json=True))
    model = _outcome(lambda: _model_parse(data, root=None))
    assert fast == model


@pytest.mark.parametrize(
    "text",
    ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1" + "0" * 5000, "1e-400"],
)
def test_the_strict_reader_refuses_what_json_cannot_carry(text: str) -> None:
    """So no value ``_STRICT.encode`` would refuse ever reaches ``from_json=True``."""
    with pytest.raises(StrictJSONError):
        loads_strict(
            '{"items":[{"id":"a","checks":[{"kind":"answer_number","value":' + text + "}]}]}"
        )


# --- duplicate keys: the C dict build must refuse exactly what the loop refused ----------------


def _old_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise StrictJSONError(f"duplicate key {key!r} makes the object ambiguous")
        result[key] = value
    return result


def _old_loads(text: str) -> Any:
    import assay._strict as strict

    original = strict._no_duplicates
    strict._no_duplicates = _old_no_duplicates
    try:
        return loads_strict(text)
    finally:
        strict._no_duplicates = original


DUPLICATES = [
    '{"a":1,"a":1}',
    '{"a":1,"a":2}',
    '{"a":1,"b":2,"a":3,"b":4}',
    '{"a":1,"b":2,"b":3,"a":4}',
    '{"a":1,"\\u0061":2}',
    '{"\\ud800":1,"\\ud800":2}',
    '{"\\ud83d\\ude00":1,"😀":2}',
    '{"é":1,"é":2}',
    '{"":1,"":2}',
    '{"x":{"y":1,"y":2}}',
    '{"items":[{"id":"a","id":"b","checks":[]}]}',
    '{"items":[{"id":"a","checks":[{"kind":"answer_number","value":4,"value":5}]}]}',
    '{"items":[],"items":[{"id":"a"}]}',
    '{"a":[{"b":1},{"b":1,"b":1}]}',
    '{"a":1,"A":2}',
    '{"a":1,"a ":2}',
]


@pytest.mark.parametrize("text", DUPLICATES, ids=range(len(DUPLICATES)))
def test_duplicate_keys_are_refused_as_before(text: str) -> None:
    def result(read: Callable[[str], Any]) -> tuple[str, Any]:
        try:
            return "ok", read(text)
        except StrictJSONError as exc:
            return "refused", str(exc)

    assert result(loads_strict) == result(_old_loads)


# --- combine's rewrite against the loop it replaced ------------------------------------------

_PRECEDENCE = (Status.REFUTED, Status.ERROR, Status.INCONCLUSIVE, Status.VERIFIED)


def _old_combine(
    outcomes: Sequence[Outcome], mode: Mode | str, weights: Sequence[float] | None
) -> tuple[Status, float | None, Mode]:
    mode = Mode(mode)
    if not outcomes:
        raise InvalidInput(
            "there are no checks: an empty check list is never a pass", where="checks"
        )
    weights = [1.0] * len(outcomes) if weights is None else weights
    if len(weights) != len(outcomes):
        raise InvalidInput("one weight per outcome is required", where="weights")
    statuses = {o.status for o in outcomes}
    status = next(s for s in _PRECEDENCE if s in statuses)
    score: float | None
    if not status.concluded:
        score = None
    elif mode is Mode.ALL:
        score = 1.0 if status is Status.VERIFIED else 0.0
    else:
        top = max(weights)
        total = math.fsum(w / top for w in weights)
        passed = math.fsum(
            w / top for o, w in zip(outcomes, weights, strict=True) if o.status is Status.VERIFIED
        )
        score = passed / total
        if status is not Status.VERIFIED:
            score = min(score, math.nextafter(1.0, 0.0))
    return status, score, mode


_MADE = {
    Status.VERIFIED: Outcome.verified("ok"),
    Status.REFUTED: Outcome.refuted("no"),
    Status.INCONCLUSIVE: Outcome.inconclusive("limit"),
    Status.ERROR: Outcome.error("broke"),
}


def _combinations() -> Iterator[tuple[list[Outcome], Mode | str, list[float] | None]]:
    chance = random.Random(7)
    statuses = list(Status)
    for size in range(0, 5):
        for _ in range(12):
            picked = [_MADE[chance.choice(statuses)] for _ in range(size)]
            mode: Mode | str = chance.choice([Mode.ALL, Mode.WEIGHTED, "all", "weighted"])
            weights = chance.choice(
                [
                    None,
                    [chance.choice([1.0, 0.5, 1e308, 1e-300, 3.0]) for _ in range(size)],
                    [1.0] * (size + 1),
                ]
            )
            yield picked, mode, weights


COMBINATIONS = list(_combinations())


@pytest.mark.parametrize(("outcomes", "mode", "weights"), COMBINATIONS)
def test_combine_gives_what_it_gave(
    outcomes: list[Outcome], mode: Mode | str, weights: list[float] | None
) -> None:
    def run(how: Callable[[], Any]) -> Any:
        try:
            return how()
        except InvalidInput as exc:
            return str(exc)

    def new() -> tuple[Status, float | None, Mode]:
        report = combine(outcomes, mode, weights)
        assert type(report.status) is Status and type(report.mode) is Mode
        return report.status, report.score, report.mode

    assert run(new) == run(lambda: _old_combine(outcomes, mode, weights))


@pytest.mark.parametrize("bad_mode", ["any", "ALL", "", None, 1])
def test_combine_still_refuses_an_unknown_mode(bad_mode: Any) -> None:
    with pytest.raises(ValueError, match="is not a valid Mode"):
        combine([Outcome.verified()], bad_mode)


BOGUS_STATUSES: list[Any] = ["passed", "VERIFIED", None, "ok", 1, True]


@pytest.mark.parametrize("status", BOGUS_STATUSES)
def test_combine_never_verifies_an_unknown_status(status: Any) -> None:
    bogus = Outcome.model_construct(status=status, detail="trust me")
    try:
        report = combine([bogus])
    except Exception:
        return  # refused: never a pass
    assert report.status is not Status.VERIFIED


# --- with_kind: the stamp no longer validates what a kind returned -----------------------------


class _Spec(Spec):
    """An empty spec for a kind built here (never registered: the registry stays as it is)."""


def _kind_returning(outcome: Outcome) -> Check:
    def function(_spec: Any, _ctx: CheckContext) -> Outcome:
        return outcome

    return Check(Kind("adv_unvalidated", _Spec, function, "s", "d"), _Spec.model_validate({}))


CONTEXT = CheckContext(answer="x", config=CONFIG)


@pytest.mark.parametrize(
    ("status", "mode"),
    [("passed", "all"), (None, "all"), ("VERIFIED", "all"), ("verified", "weighted")],
)
def test_a_kinds_unvalidated_outcome_is_never_a_pass(status: Any, mode: str) -> None:
    check = _kind_returning(Outcome.model_construct(status=status, detail="trust me"))
    try:
        report = run_checks([check], CONTEXT, mode)
    except ValidationError:
        return  # refused, as with_kind did before
    assert all(type(o.status) is Status for o in report.outcomes)
    if report.status is Status.VERIFIED:
        assert report.score == 1.0


@pytest.mark.parametrize("made", [*_MADE.values(), Outcome.refuted("e", {"a": [1, 2.5]})])
def test_with_kind_on_a_validated_outcome_equals_the_validated_stamp(made: Outcome) -> None:
    stamped = made.with_kind("answer_number")
    validated = Outcome.model_validate({**made.__dict__, "kind": "answer_number"})
    assert stamped == validated
    assert stamped.to_json() == validated.to_json()
    assert {k: type(v) for k, v in stamped.__dict__.items()} == {
        k: type(v) for k, v in validated.__dict__.items()
    }


# --- json_text on what real judging and odd evidence produce ---------------------------------


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


_EVIDENCE: list[Any] = [
    {"big": 10**300, "neg": -(10**40), "tiny": 5e-324, "neg0": -0.0, "e": 1e16, "f": 1.5e-7},
    {"s": "\ud800\udc00 pair", "lone": "\udfff", "sep": "\u2028\u2029", "nul": "\x00", "q": '"\\'},
    {"nested": [[[{"a": (1, "t")}]]], "set": {1}, "bytes": b"\xff", "none": None, "bool": False},
    {chr(0xD800): 1, "\ufffd": 2},  # one key once cleaned
    {"keys": {1: "int key", 2.5: "float key", None: "none", (1,): "tuple"}},
    {"nan": float("nan"), "inf": float("inf"), "list": [float("-inf")]},
    {"deep": _deep(70)},
    {},
]


@pytest.mark.parametrize("evidence", _EVIDENCE, ids=range(len(_EVIDENCE)))
@pytest.mark.parametrize("status", list(Status))
def test_result_text_equals_the_model_dump_encoded(evidence: Any, status: Status) -> None:
    made = {
        Status.VERIFIED: Outcome.verified,
        Status.REFUTED: Outcome.refuted,
        Status.INCONCLUSIVE: Outcome.inconclusive,
        Status.ERROR: Outcome.error,
    }[status]("detail \ud800 é", evidence).with_kind("answer_key")
    score = {Status.VERIFIED: 1.0, Status.REFUTED: 0.0}.get(status)
    report = Report(status=status, score=score, outcomes=(made, made))
    for id in ("a", "é ✓", "\ud800", 'q"\\\n'):
        result = EpisodeResult.of(id, report)
        assert result.json_text() == _compact(result.to_json())


# --- the service: bytes against the model path, routes against the FastAPI route ---------------


@pytest.fixture(scope="module")
def apps() -> Iterator[tuple[TestClient, TestClient]]:
    """(the app as built, the same app with the plain route removed: FastAPI's route alone)."""
    fast, plain = create_app(Settings()), create_app(Settings())
    _drop_plain_route(plain)
    with TestClient(fast) as one, TestClient(plain) as two:
        yield one, two


def _drop_plain_route(app: FastAPI) -> None:
    routes = app.router.routes
    dropped = [r for r in routes if type(r) is Route and r.path == "/v1/verify"]
    assert len(dropped) == 1, "the plain route is gone: update this test"
    routes.remove(dropped[0])


def test_the_service_answers_the_model_paths_bytes(apps: tuple[TestClient, TestClient]) -> None:
    """Every answer-only hostile shape through ``/v1/verify``: byte for byte what judging each
    through the model and encoding its ``to_json()`` gives (keys excluded: see below)."""
    items = [d for d in SHAPES if _answer_only(d) and "idempotency_key" not in d]
    fast, _ = apps
    body = json.dumps({"items": items}).encode()
    reply = fast.post("/v1/verify", content=body)
    assert reply.status_code == 200, reply.text
    sent = json.loads(body)["items"]  # what the service reads (JSON keys are text)
    want = [_model_judge(d, where=f"items[{i}]").to_json() for i, d in enumerate(sent)]
    assert reply.content == json_bytes({"results": want})


def test_repeated_keys_answer_the_first_verdict(apps: tuple[TestClient, TestClient]) -> None:
    fast, _ = apps
    items = [
        {"id": "k1", "checks": [N], "answer": "4", "idempotency_key": "adv-svcfast-1"},
        {"id": "k2", "checks": [N], "answer": "4", "idempotency_key": "adv-svcfast-1"},
        {"id": "k3", "checks": [N], "answer": "5", "idempotency_key": "adv-svcfast-1"},
        {"id": "\ud800", "checks": [N], "answer": "4", "idempotency_key": "adv-svcfast-1"},
    ]
    first = fast.post("/v1/verify", content=json.dumps({"items": items}).encode())
    again = fast.post("/v1/verify", content=json.dumps({"items": items}).encode())
    results = first.json()["results"]
    want = _model_judge(items[0]).to_json()
    assert results[0] == want
    assert results[1] == {**want, "id": "k2"}
    assert (
        results[2]["status"] == "error" and "idempotency_key" in results[2]["outcomes"][0]["detail"]
    )
    assert results[3] == _model_judge(items[3], where="items[3]").to_json()  # refused id
    assert results[3]["status"] == "error"
    assert again.content == first.content


def _requests() -> list[tuple[str, str, dict[str, str], bytes]]:
    body = json.dumps({"items": [{"id": "a", "checks": [N], "answer": "4"}]}).encode()
    return [
        ("POST", "/v1/verify", {}, body),
        ("GET", "/v1/verify", {}, b""),
        ("HEAD", "/v1/verify", {}, b""),
        ("OPTIONS", "/v1/verify", {"access-control-request-method": "POST"}, b""),
        ("PUT", "/v1/verify", {}, body),
        ("DELETE", "/v1/verify", {}, b""),
        ("PATCH", "/v1/verify", {}, body),
        ("POST", "/v1/verify/", {}, body),
        ("POST", "/v1/verify?items=1", {}, body),
        ("POST", "/v1/Verify", {}, body),
        ("POST", "/v1//verify", {}, body),
        ("POST", "/v1/verify%2F", {}, body),
        ("POST", "/v1/verif%79", {}, body),
        ("POST", "/v1/verify", {"content-type": "text/plain"}, body),
        ("POST", "/v1/verify", {"content-type": "application/x-www-form-urlencoded"}, b"items=1"),
        ("POST", "/v1/verify", {"content-type": "multipart/form-data; boundary=x"}, b"--x--"),
        ("POST", "/v1/verify", {"content-encoding": "gzip"}, gzip.compress(body)),
        ("POST", "/v1/verify", {"transfer-encoding": "chunked"}, body),
        ("POST", "/v1/verify", {"content-length": "abc"}, body),
        ("POST", "/v1/verify", {"authorization": "Bearer nothing"}, body),
        ("POST", "/v1/verify", {}, b""),
        ("POST", "/v1/verify", {}, b"[]"),
        ("POST", "/v1/verify", {}, b"null"),
        ("POST", "/v1/verify", {}, b'"items"'),
        ("POST", "/v1/verify", {}, b'{"items": {}}'),
        ("POST", "/v1/verify", {}, b'{"items": [1, "x", null, [], true]}'),
        ("POST", "/v1/verify", {}, b'{"items": [], "items": []}'),
        ("POST", "/v1/verify", {}, b'{"items": [], "extra": 1}'),
        ("POST", "/v1/verify", {}, b'{"Items": []}'),
        ("POST", "/v1/verify", {}, b"\xef\xbb\xbf" + body),
        ("POST", "/v1/verify", {}, body + b"\x00"),
        ("POST", "/v1/verify", {}, body + b" \n"),
        ("POST", "/v1/verify", {}, b'{"items": [{"id": "a", "checks": [{"kind": "answer_number", '
         b'"value": 1e400}], "answer": "4"}]}'),
        ("POST", "/v1/verify", {}, b'{"items": [NaN]}'),
        ("POST", "/v1/verify", {}, b"\xff\xfe"),
        ("POST", "/v1/verify", {}, json.dumps({"items": [{"id": "a"}] * 3000}).encode()),
        ("POST", "/v1/verify", {}, b"[" * 100_000),
        ("POST", "/v1/verify", {}, b'{"items": [' + b'{"id": "x"},' * 200_000 + b"{}]}"),
    ]  # fmt: skip


REQUESTS = _requests()


@pytest.mark.parametrize(
    ("method", "path", "headers", "body"),
    REQUESTS,
    ids=[f"{i}-{r[0]}" for i, r in enumerate(REQUESTS)],
)
def test_the_plain_route_keeps_every_rule_of_the_fastapi_route(
    apps: tuple[TestClient, TestClient],
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes,
) -> None:
    """Methods, redirects, Content-Type (ignored alike), gzip (not decoded alike), chunked bodies,
    413 / 422 / 400 and their details: the same status, headers and body from both routes."""
    answers = []
    for client in apps:
        reply = client.request(method, path, headers=headers, content=body, follow_redirects=False)
        kept = {k: v for k, v in reply.headers.items() if k not in ("date", "server")}
        answers.append((reply.status_code, kept, reply.content))
    assert answers[0] == answers[1]


def test_limits_hold_on_the_plain_route() -> None:
    """413 past the body limit (declared or streamed), 422 past the item limit."""
    app = create_app(Settings(max_body_bytes=1024, max_items=2))
    with TestClient(app) as client:
        big = b'{"items": [' + b" " * 2000 + b"]}"
        assert client.post("/v1/verify", content=big).status_code == 413

        def stream() -> Iterator[bytes]:
            yield b'{"items": ['
            for _ in range(100):
                yield b" " * 64
            yield b"]}"

        assert client.post("/v1/verify", content=stream()).status_code == 413
        three = json.dumps({"items": [{"id": "a", "checks": [N], "answer": "4"}] * 3}).encode()
        assert client.post("/v1/verify", content=three).status_code == 422


LABELS: list[Any] = [
    {"checks": [N]},
    {"checks": [N], "mode": "weighted"},
    {"checks": [N], "mode": "ALL"},
    {"checks": [N], "id": "smuggled", "idempotency_key": "smuggled"},
    {"checks": [N], "answer": "4"},
    {"checks": [N], "label_does_not_fit": "x"},
    {"checks": [N, {**FIVE, "weight": 3.0}], "mode": "weighted"},
    {"checks": [{**N, "\ud800": 1}]},
    {"checks": []},
    {"checks": "x"},
    {"task": {"checks": [N]}},
    '{"checks": [{"kind": "answer_number", "value": 4}]}',
    '{"checks": [{"kind": "answer_number", "value": 4}], "checks": []}',
    '{"checks": [{"kind": "answer_number", "value": 4}], "description": "\\ud800"}',
    "not json",
]


def test_get_reward_answers_the_model_paths_rewards(apps: tuple[TestClient, TestClient]) -> None:
    """``/get_reward`` judges template-made items through the same shortcut."""
    from assay.episodes import Template
    from assay.service import _openrlhf

    fast, _ = apps
    answers = ["4", "5", "4 or 5", "٤", ""]
    queries = [f"Q: {answers[i % len(answers)]}" for i in range(len(LABELS))]
    prompts = ["Q: "] * len(LABELS)
    body = json.dumps({"query": queries, "prompts": prompts, "labels": LABELS}).encode()
    reply = fast.post("/get_reward", content=body)
    assert reply.status_code == 200, reply.text
    template, sent = Template.labels_are_tasks(), json.loads(body)
    want = [
        _model_judge(
            template.item(id=str(i), label=label, answer=query[len("Q: ") :]),
            where=f"samples[{i}]",
        ).to_json()
        for i, (query, label) in enumerate(zip(sent["query"], sent["labels"], strict=True))
    ]
    assert reply.json() == _openrlhf.reply(want)


class _Text(str):
    """Text of another type, as a Python caller may pass it."""


PYTHON_VALUES: list[dict[str, Any]] = [
    {"id": "p", "checks": [{**N, "value": float("nan")}], "answer": "4"},
    {"id": "p", "checks": [{**N, "value": float("inf")}], "answer": "4"},
    {"id": "p", "checks": [{"kind": "answer_key", "key": {"t": {1, 2}}}], "answer": "4"},
    {"id": "p", "checks": [{"kind": "answer_key", "key": {"t": b"4"}}], "answer": "4"},
    {"id": "p", "checks": [{"kind": "answer_key", "key": {"t": (1, 2)}}], "answer": "[1, 2]"},
    {"id": "p", "checks": [N], "answer": "4", "description": float("nan")},
    {"id": "p", "checks": [N], "answer": _Text("4")},
    {"id": _Text("p"), "checks": [N], "answer": "4"},
    {"id": "p", "checks": [N], "answer": "4", "mode": Mode.WEIGHTED},
    {"id": "p", "checks": [N], "answer": "4", "mode": _Text("all")},
    {"id": "p", "checks": (N,), "answer": "4"},
    {"id": "p", "checks": [dict(N)], "answer": "4", "idempotency_key": _Text("k")},
    {"id": "p", "checks": [N], "answer": "4", **{1: "int key"}},  # type: ignore[dict-item]
]


@pytest.mark.parametrize("data", PYTHON_VALUES, ids=range(len(PYTHON_VALUES)))
def test_a_python_callers_values_are_read_as_the_model_reads_them(data: dict[str, Any]) -> None:
    """Without ``from_json`` (the CLI, MCP, the adapters) the shortcut still runs: values JSON
    cannot carry are still refused, text of another type still goes to the model."""
    fast = _outcome(lambda: parse_episode(data, root=None, config=CONFIG))
    model = _outcome(lambda: _model_parse(data, root=None))
    assert fast == model


def test_normalization_variants_of_a_key_are_distinct_keys(
    apps: tuple[TestClient, TestClient],
) -> None:
    """Keys are compared as sent (no normalization), on the shortcut as on the model: three
    spellings of "Å" are three keys, so none is answered with another's verdict."""
    fast, _ = apps
    spellings = ["adv-svcfast-\u00c5", "adv-svcfast-A\u030a", "adv-svcfast-\u212b"]
    items = [
        {"id": f"n{i}", "checks": [N], "answer": answer, "idempotency_key": key}
        for i, (key, answer) in enumerate(zip(spellings, ["4", "5", "4 or 5"], strict=True))
    ]
    reply = fast.post("/v1/verify", content=json.dumps({"items": items}).encode())
    assert [r["status"] for r in reply.json()["results"]] == ["verified", "refuted", "refuted"]
    assert reply.json()["results"] == [
        _model_judge(d, where=f"items[{i}]").to_json() for i, d in enumerate(items)
    ]
