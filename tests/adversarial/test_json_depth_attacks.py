r"""Attacks on the fixed JSON nesting cap (adv-depth, session 9): ``loads_strict`` refuses
nesting past ``JSON_DEPTH_LIMIT`` (500) before parsing, by ``nesting_depth_over`` (a bracket
count, then a regex token scan that skips strings); ``json_schema`` reads with
``SCHEMA_DEPTH_LIMIT`` (150); envelopes (a request body, a batch line) are read uncapped.

The attacker wants a verdict that depends on the caller's stack or the interface (the same item
``verified`` in one and not another), valid JSON refused, or an answer that costs seconds.
Findings (all six fixed in session 9 as suggested below, bytes decoded first for D3, labels
read uncapped for D4, a deep line answered alone for D6; their tests now pass):

- D1 (high, availability): the token scan is quadratic on a string that never closes and holds
  escaped quotes: at every ``"`` the string alternative runs to the end of the text and fails,
  and the scan restarts two characters on. ``'"' + '\\"' * n + '[]' * 501`` (invalid JSON,
  which ``json.loads`` refuses in microseconds) takes ~0.5 s at 5 KB, ~18 s at 33 KB (one
  ``/v1/verify`` item of a 65 KB body: 18.5 s), ~67 s at 65 KB, with the GIL held (``re`` never
  releases it), so one answer stalls the whole service; the body limit is 32 MB. Every JSON
  input goes through it (answers, workspace files; ``json_schema`` needs only 151 brackets).
  Fix: a linear pattern whose unterminated string runs to the end of the text, possessive so
  nothing is tried twice: ``"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)|[\[\]{}]`` (raw; and its
  bytes twin). Exact on valid JSON (fuzzed against the current pattern), 4 ms at 130 KB.
- D2 (medium; F1 still open for ``json_schema``): the validator's frames per document level
  depend on the schema. ``{"type": "array", "items": {"$ref": "#"}}`` needs few, but a common
  tree schema (``oneOf`` of a leaf and an array of ``$ref``) or an ``allOf``/``anyOf``/``$ref``
  chain needs 7-10, so a document 70-150 deep (under the cap, valid) meets the recursion limit
  at a depth set by the caller's stack: ``assay batch`` refutes ("nests too deeply") what a
  thread and ``/v1/verify`` verify (the chain schema at depth 95-98). The platform's rule
  stages (``apply_rule``) and review responses use the same ``validate_json``. Fix: run
  ``validate_json`` (schema check and ``iter_errors``) on a thread of its own whose stack base
  is the same whoever calls (a fresh thread per call, or a one-worker pool created lazily per
  process), so only the document and the schema decide.
- D3 (low-medium): bytes are scanned byte by byte, but ``json.loads`` reads UTF-16 and UTF-32
  bytes too. A character with a 0x22 byte (U+2200) or, in UTF-16-LE, a 0x5C byte before a
  quote (U+5C00) shifts the scan's idea of where strings are: 600 or 900 levels pass the cap
  (then parse, or meet RecursionError, by the caller's stack), and a shallow document with
  brackets inside a string is refused as too deep. Reached where ``loads_strict`` takes bytes:
  checker results (``/output/result.json``, the fd channel), conformance fixtures, review
  responses, the web API body. Fix: in ``loads_strict``, decode bytes first as ``json`` does
  (``text.decode(json.detect_encoding(text), "surrogatepass")``, UnicodeDecodeError a
  StrictJSONError), then scan and parse that str; or refuse JSON that is not UTF-8.
- D4 (low, author side): the cap applies to a task read from a label text (TRL/verl adapters,
  ``/get_reward``) but not to the same task sent as an item (``/v1/verify``, ``assay batch``,
  ``judge_item``). An ``answer_key`` key nested 497-498 deep, with the right answer:
  ``verified`` by ``/v1/verify``, ``error`` by the adapter and ``/get_reward``; 600 deep:
  ``refuted`` against ``error``. Fix: cap check spec values where specs are built (a value
  nested deeper than a fixed limit refused naming the field, on every interface), and read a
  label text as the envelope it is (``max_depth=None``).
- D5 (low, author side): the adapters' own recursion over a label or template is two Python
  frames a level (``integrations._core.plain``: a call and a comprehension; the template's
  ``_fill`` too), so a dict label or a template 300-490 deep (under the cap) is ``verified``
  or ``error`` by the caller's stack (490: ``error`` from pytest's main thread, ``verified`` in
  a fresh thread). Fix: make ``plain``, ``_fill`` and ``_check_placeholders`` iterative (an
  explicit stack), as ``strict_equal`` is.
- D6 (medium, author side): ``assay batch`` pickles each job's parsed item to its worker; a line
  whose check holds a value ~490 or more deep (which the uncapped envelope reads) fails the
  pickle, and the whole run ends with "internal error: RecursionError ... while pickling": no
  line of the batch gets a result, not only the deep one. Fix: send the worker the line's raw
  bytes and parse there (nothing deep is pickled), or refuse, as that line's own error, a line
  nested deeper than a fixed item limit before it is queued (the same limit as D4's).

Attacks that failed (passing tests): the str scan is exact on valid JSON (escaped backslashes
before quotes, brackets and escapes in keys and values, ``\u005b``, lone surrogates; fuzzed),
and so is the bytes scan on UTF-8 (with or without a BOM); a document at the cap is read and
compared the same under a caller stack of 0-400 extra frames and in a thread, ``describe`` of it
included; a workspace document around 500 and 880-990 deep gets one ``file_json`` verdict on
every interface; unterminated strings without escaped quotes stay linear; on valid documents
the scan costs 1.3-1.8 times ``json.loads``.
"""

from __future__ import annotations

import functools
import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from starlette.testclient import TestClient

from assay import CheckContext, Config, build_checks, run_checks
from assay._strict import JSON_DEPTH_LIMIT, StrictJSONError, loads_strict, nesting_depth_over
from assay.checks._kinds._json_schema import SCHEMA_DEPTH_LIMIT, validate_json
from assay.episodes import judge_item
from assay.integrations._core import make_judge
from assay.platform._external import apply_rule
from assay.service import Settings, create_app

CONFIG = Config()
ASSAY = Path(sys.executable).with_name("assay")
T = TypeVar("T")


def _with_frames(frames: int, call: Callable[[], T]) -> T:
    """``call()`` under ``frames`` more Python frames: a caller deeper in its own stack."""
    return call() if frames <= 0 else _with_frames(frames - 1, call)


def _in_a_thread(call: Callable[[], T]) -> T:
    found: list[T] = []
    worker = threading.Thread(target=lambda: found.append(call()))
    worker.start()
    worker.join(timeout=120)
    assert found, "the thread did not finish"
    return found[0]


def _depth(value: Any) -> int:
    """The nesting of arrays and objects in a parsed value (iteratively)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            stack.extend(
                (inner, level) for inner in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def _nested(depth: int, leaf: str = "") -> str:
    return "[" * depth + leaf + "]" * depth


# --- D1: the scan's cost ------------------------------------------------------------------

_QUOTES = 64_000
"""Escaped quotes in the D1 texts: 128 KB, well inside every size limit; the quadratic scan
takes minutes on it, a linear one milliseconds."""

_COST_SCRIPT = """
import sys, time
from assay._strict import StrictJSONError, loads_strict
case, n = sys.argv[1], int(sys.argv[2])
stuck = '"' + '\\\\"' * n
started = time.perf_counter()
if case == "str":
    try:
        loads_strict(stuck + "[]" * 501)
    except StrictJSONError:
        pass
elif case == "bytes":
    try:
        loads_strict((stuck + "[]" * 501).encode())
    except StrictJSONError:
        pass
elif case == "answer_key":
    from assay import CheckContext, build_checks, run_checks
    checks = build_checks([{"kind": "answer_key", "key": {"t": 1}}])
    assert run_checks(checks, CheckContext(answer=stuck + "[]" * 501)).status.value == "refuted"
elif case == "json_schema":
    from assay.checks._kinds._json_schema import validate_json
    outcome = validate_json(
        b'{"type": "array"}', stuck + "[]" * 151, timeout=1.0, schema_name="s", document_name="d"
    )
    assert outcome.status.value == "refuted"
elif case == "empty strings":
    try:
        loads_strict('"' * (2 * n) + "[]" * 501)
    except StrictJSONError:
        pass
elif case == "quote and bracket":
    try:
        loads_strict('"[' * n + "[]" * 501)
    except StrictJSONError:
        pass
elif case == "unterminated plain":
    try:
        loads_strict("[]" * 501 + '"' + "a" * (2 * n))
    except StrictJSONError:
        pass
elif case == "valid escapes":
    loads_strict("[" + '"\\\\\\\\\\\\"",' * n + "[]]")
print(time.perf_counter() - started)
"""
_QUADRATIC = ["str", "bytes", "answer_key", "json_schema"]
_LINEAR = ["empty strings", "quote and bracket", "unterminated plain", "valid escapes"]
_DEADLINE = 25.0
"""Seconds from the start of all D1 processes (run at once, niced) to the last allowed finish:
an import and a linear scan take a few seconds on a busy machine, the quadratic one minutes."""


@pytest.fixture(scope="module")
def cost_runs() -> Iterator[tuple[float, dict[str, subprocess.Popen[str]]]]:
    runs = {
        case: subprocess.Popen(
            ["nice", "-n", "10", sys.executable, "-c", _COST_SCRIPT, case, str(_QUOTES)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for case in _QUADRATIC + _LINEAR
    }
    yield time.monotonic() + _DEADLINE, runs
    for run in runs.values():
        if run.poll() is None:
            run.kill()
        run.communicate()


def _finishes(cost_runs: tuple[float, dict[str, subprocess.Popen[str]]], case: str) -> None:
    deadline, runs = cost_runs
    run = runs[case]
    try:
        _, err = run.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        run.kill()
        run.communicate()
        pytest.fail(f"{case}: a {2 * _QUOTES // 1000} KB text still not scanned at the deadline")
    assert run.returncode == 0, err[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("case", _QUADRATIC)
def test_an_unclosed_string_of_escaped_quotes_is_refused_quickly(
    cost_runs: tuple[float, dict[str, subprocess.Popen[str]]], case: str
) -> None:
    _finishes(cost_runs, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", _LINEAR)
def test_other_quote_patterns_are_scanned_in_linear_time(
    cost_runs: tuple[float, dict[str, subprocess.Popen[str]]], case: str
) -> None:
    _finishes(cost_runs, case)


@pytest.mark.parametrize(
    "text",
    [
        "[" + ",".join(["[]"] * 200_000) + "]",
        "[" + ",".join(['{"a":[1,"x\\\\\\"]y"]}'] * 50_000) + "]",
        "[" + ",".join(['"' + "[" * 40 + '"'] * 20_000) + "]",
    ],
    ids=["flat arrays", "objects with escapes", "brackets in strings"],
)
def test_the_scan_of_a_valid_document_costs_about_what_parsing_does(text: str) -> None:
    """Each text has far more than 500 brackets, so the exact scan runs on all of it."""
    started = time.perf_counter()
    assert not nesting_depth_over(text)
    scan = time.perf_counter() - started
    started = time.perf_counter()
    loads_strict(text, max_depth=None)
    parse = time.perf_counter() - started
    assert scan < 10 * parse + 0.5, (scan, parse)


# --- D2: json_schema's recursion against the caller's stack -------------------------------

TREE_SCHEMAS: dict[str, dict[str, Any]] = {
    "oneOf tree": {"oneOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}]},
    "allOf-anyOf chain": {
        "$defs": {
            "node": {"allOf": [{"$ref": "#/$defs/list"}]},
            "list": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/node"}}]},
        },
        "$ref": "#/$defs/node",
    },
}


def _tree(schema: str, depth: int) -> str:
    """A document ``depth`` deep that is valid against ``TREE_SCHEMAS[schema]``."""
    return _nested(depth, "1" if schema == "oneOf tree" else "")


def _schema_status(reader: str, schema: str, depth: int) -> str:
    """``reader`` judging a document ``depth`` deep against ``TREE_SCHEMAS[schema]``."""
    document = _tree(schema, depth)
    if reader == "platform rule stage":
        status, _ = apply_rule(TREE_SCHEMAS[schema], document.encode(), CONFIG)
        return status.value
    outcome = validate_json(
        json.dumps(TREE_SCHEMAS[schema]).encode(),
        document,
        timeout=5.0,
        schema_name="s",
        document_name="d",
    )
    return outcome.status.value


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["validate_json", "platform rule stage"])
@pytest.mark.parametrize("schema", sorted(TREE_SCHEMAS))
def test_a_schema_verdict_does_not_depend_on_the_callers_stack(reader: str, schema: str) -> None:
    """Every depth tried is within ``SCHEMA_DEPTH_LIMIT`` and valid against the schema."""
    differing = {}
    for depth in range(60, SCHEMA_DEPTH_LIMIT, 5):
        judged = functools.partial(_schema_status, reader, schema, depth)
        found = {
            "here": judged(),
            "in a thread": _in_a_thread(judged),
            "300 frames deeper": _with_frames(300, judged),
        }
        if len(set(found.values())) > 1:
            differing[depth] = found
    assert not differing, differing


# --- every interface at once: D2's schemas and file_json's documents ----------------------

INTERFACE_SCHEMA_DEPTHS = list(range(70, 112))
"""Around where the chain schema meets the recursion limit from each interface's stack."""
FILE_JSON_DEPTHS = [460, *range(JSON_DEPTH_LIMIT - 3, JSON_DEPTH_LIMIT + 3), 880, 940, 990]


def _interface_items(root: Path) -> list[dict[str, Any]]:
    (root / "schema.json").write_text(json.dumps(TREE_SCHEMAS["allOf-anyOf chain"]))
    items: list[dict[str, Any]] = []
    for depth in INTERFACE_SCHEMA_DEPTHS:
        (root / f"s{depth}").mkdir()
        (root / f"s{depth}" / "a.json").write_text(_nested(depth))
        check = {"kind": "json_schema", "artifact": "a.json", "schema": "schema.json"}
        items.append({"id": f"s{depth}", "workspace": f"s{depth}", "checks": [check]})
    for depth in FILE_JSON_DEPTHS:
        (root / f"f{depth}").mkdir()
        (root / f"f{depth}" / "a.json").write_text(_nested(depth - 1, "1"))
        values: list[tuple[Any, str]] = [([2], "wrong")]
        if depth < 470:  # the right value as a spec value (deeper: D6, ``assay batch`` dies)
            values.append((json.loads(_nested(depth - 1, "1")), "right"))
        for value, name in values:
            check = {"kind": "file_json", "path": "a.json", "value": value}
            items.append({"id": f"f{depth}-{name}", "workspace": f"f{depth}", "checks": [check]})
    return items


@pytest.fixture(scope="module")
def by_interface(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Each item's status by ``judge_item`` here, in a thread, ``/v1/verify`` and ``assay batch``."""
    root = tmp_path_factory.mktemp("depth-interfaces")
    items = _interface_items(root)
    statuses: dict[str, dict[str, str]] = {item["id"]: {} for item in items}

    def record(interface: str, found: list[str]) -> None:
        assert len(found) == len(items), (interface, found)
        for item, status in zip(items, found, strict=True):
            statuses[item["id"]][interface] = status

    record("judge_item", [judge_item(it, root=root, config=CONFIG).status.value for it in items])
    record(
        "judge_item in a thread",
        _in_a_thread(
            lambda: [judge_item(it, root=root, config=CONFIG).status.value for it in items]
        ),
    )
    with TestClient(create_app(Settings(workspace_root=root))) as client:
        reply = client.post("/v1/verify", json={"items": items})
    assert reply.status_code == 200, reply.text[:2000]
    record("/v1/verify", [result["status"] for result in reply.json()["results"]])
    episodes = root / "episodes.jsonl"
    episodes.write_text("".join(json.dumps(item) + "\n" for item in items))
    run = subprocess.run(
        [str(ASSAY), "batch", str(episodes), "--jobs", "1", "--workspace-root", str(root)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    record("assay batch", [line["status"] for line in lines])
    return statuses


def _differing(by_interface: dict[str, dict[str, str]], prefix: str) -> dict[str, dict[str, str]]:
    return {
        item: found
        for item, found in by_interface.items()
        if item.startswith(prefix) and len(set(found.values())) > 1
    }


@pytest.mark.slow
def test_a_schema_verdict_is_the_same_on_every_interface(
    by_interface: dict[str, dict[str, str]],
) -> None:
    assert not _differing(by_interface, "s"), _differing(by_interface, "s")


@pytest.mark.slow
def test_a_workspace_documents_file_json_verdict_is_the_same_on_every_interface(
    by_interface: dict[str, dict[str, str]],
) -> None:
    assert not _differing(by_interface, "f"), _differing(by_interface, "f")
    statuses = {item: set(found.values()) for item, found in by_interface.items()}
    assert statuses["f460-right"] == {"verified"}
    assert statuses[f"f{JSON_DEPTH_LIMIT}-wrong"] == {"refuted"}
    assert statuses[f"f{JSON_DEPTH_LIMIT + 1}-wrong"] == {"refuted"}  # past the cap: never read
    assert statuses["f990-wrong"] == {"refuted"}


# --- a value read at the cap, against the caller's stack ---------------------------------


def _workspace(tmp_path: Path, depth: int) -> Path:
    (tmp_path / "a.json").write_text(_nested(depth - 1, "1"))
    return tmp_path


@pytest.mark.parametrize("frames", [0, 150, 300, 400])
@pytest.mark.parametrize("thread", [False, True], ids=["here", "in a thread"])
def test_a_value_at_the_cap_is_read_and_described_whatever_the_stack(
    tmp_path: Path, frames: int, thread: bool
) -> None:
    """``file_json`` refuting a document at the cap renders it (``describe``: ``json.dumps``,
    which recurses per level); ``answer_key`` parses a submission at the cap."""
    workspace = _workspace(tmp_path, JSON_DEPTH_LIMIT)
    wrong = build_checks([{"kind": "file_json", "path": "a.json", "value": [2]}])
    key = build_checks([{"kind": "answer_key", "key": {"t": 1}}])
    answer = '{"outputs": {"t": 1}, "reported_reward": ' + _nested(JSON_DEPTH_LIMIT - 1) + "}"

    def judged() -> tuple[str, str, str]:
        refuted = run_checks(wrong, CheckContext(workspace=workspace))
        verified = run_checks(key, CheckContext(answer=answer))
        return refuted.status.value, refuted.outcomes[0].detail, verified.status.value

    found = (
        _in_a_thread(lambda: _with_frames(frames, judged))
        if thread
        else _with_frames(frames, judged)
    )
    assert found[0] == "refuted" and "holds [[[" in found[1], found[1][:200]
    assert found[2] == "verified"


# --- D3 and the scan's exactness ----------------------------------------------------------

_WIDE = ["utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32"]


_HIDING = [
    *(("\u2200", encoding) for encoding in _WIDE),  # a 0x22 byte ends the scan's string early
    *(("\u5c00", encoding) for encoding in ("utf-16-le", "utf-16")),  # 0x5C escapes the quote
]


@pytest.mark.parametrize("depth", [600, 900])
@pytest.mark.parametrize(("char", "encoding"), _HIDING)
def test_a_wide_encoding_cannot_hide_nesting_past_the_cap(
    encoding: str, depth: int, char: str
) -> None:
    text = f'["{char}",' + _nested(depth, '"y"') + "]"
    with pytest.raises(StrictJSONError):
        loads_strict(text.encode(encoding))


@pytest.mark.parametrize("encoding", _WIDE)
def test_a_wide_encoding_is_not_refused_for_brackets_in_a_string(encoding: str) -> None:
    """One level deep; 600 brackets inside a string. Refusing the encoding would be fair,
    refusing the nesting is not."""
    text = '["\u2200", "' + "[" * 600 + '", "z"]'
    refusal = ""
    try:
        loads_strict(text.encode(encoding))
    except StrictJSONError as exc:
        refusal = str(exc)
    assert "nest deeper" not in refusal, refusal


_CRAFTED = [
    '["a\\\\", ' + _nested(4) + "]",  # an escaped backslash, then the real closing quote
    '["a\\\\\\"[[[[[[[[", ' + _nested(3) + "]",  # an escaped quote after an escaped backslash
    '{"[[[[[[[[": ' + _nested(2) + ', "\\"": "]]]]]]]]"}',  # brackets and a quote in keys
    '["\\u005b\\u005b\\u005b\\u005b\\u005b\\u005b\\u005b", ' + _nested(3) + "]",
    '["\\ud800[[[[[[[[", "\\udfff\\\\", ' + _nested(4) + "]",  # lone surrogates
    ' \n\t[ [ [ [ "[[[[[[[[[[" ] ] ] ] \r\n',  # whitespace all around
    '["\\\\\\\\\\\\\\\\"' + ", " + '"[[[[[[[["' + ", " + _nested(5) + "]",
]


@pytest.mark.parametrize("text", _CRAFTED)
@pytest.mark.parametrize("form", ["str", "utf-8", "utf-8 with BOM"])
def test_the_scan_is_exact_on_crafted_strings(text: str, form: str) -> None:
    """Each text holds more brackets in strings than levels, so the exact scan decides: the
    cap at the true depth reads it, one less refuses it."""
    depth = _depth(json.loads(text))
    data: str | bytes = text
    if form != "str":
        data = ("\ufeff" if form == "utf-8 with BOM" else "").encode() + text.encode(
            "utf-8", "surrogatepass"
        )
    assert loads_strict(data, max_depth=depth) == json.loads(text)
    with pytest.raises(StrictJSONError, match="nest deeper"):
        loads_strict(data, max_depth=depth - 1)


def _random_value(rng: random.Random, level: int) -> Any:
    if level > 7 or rng.random() < 0.3:
        return rng.choice([1, 'a\\"]', "\\\\", "[{", "\\", '"', "\ud800", 'x]}\\\\"', "\u2200"])
    if rng.random() < 0.5:
        return [_random_value(rng, level + 1) for _ in range(rng.randint(0, 3))]
    keys = ["[", '\\"{', "k", "]\\"]
    return {
        rng.choice(keys) + str(i): _random_value(rng, level + 1) for i in range(rng.randint(0, 3))
    }


@pytest.mark.parametrize("seed", range(4))
def test_the_scan_is_exact_on_random_documents(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        value = _random_value(rng, 0)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        depth = _depth(value)
        assert not nesting_depth_over(text, depth), text
        assert depth == 0 or nesting_depth_over(text, depth - 1), text
        data = text.encode("utf-8", "surrogatepass")
        assert loads_strict(data, max_depth=depth) == json.loads(data)
        if depth:
            with pytest.raises(StrictJSONError, match="nest deeper"):
                loads_strict(data, max_depth=depth - 1)


# --- D4: a task's nesting as a label against as an item -----------------------------------

KEY_DEPTHS = [497, 498, 600]


def _key_task(depth: int) -> tuple[list[dict[str, Any]], str]:
    """An ``answer_key`` task whose one key value nests ``depth`` deep, and its right answer."""
    value = _nested(depth)
    return [
        {"kind": "answer_key", "key": {"t": json.loads(value)}}
    ], '{"outputs": {"t": ' + value + "}}"


@pytest.mark.parametrize("depth", KEY_DEPTHS)
def test_a_deep_task_gets_one_verdict_as_an_item_and_as_a_label(depth: int) -> None:
    checks, answer = _key_task(depth)
    item = {"id": "k", "checks": checks, "answer": answer}
    label = json.dumps({"checks": checks})
    judge = make_judge()
    found = {
        "judge_item": judge_item(item, root=None, config=CONFIG).status.value,
        "adapter, label as text": judge.judge(label=label, completion=answer).status.value,
    }
    with TestClient(create_app(Settings())) as client:
        found["/v1/verify"] = client.post("/v1/verify", json={"items": [item]}).json()["results"][
            0
        ]["status"]
        logs = client.post(
            "/get_reward", json={"query": ["Q" + answer], "prompts": ["Q"], "labels": [label]}
        ).json()["extra_logs"]
        found["/get_reward"] = next(
            s for s in ("verified", "refuted", "inconclusive", "error") if logs[s][0] == 1.0
        )
    assert len(set(found.values())) == 1, found


def test_d4s_depths_are_where_the_label_cap_bites() -> None:
    """D4 is not vacuous: below the window every interface verifies the right answer."""
    checks, answer = _key_task(KEY_DEPTHS[0] - 1)
    label = json.dumps({"checks": checks})
    assert make_judge().judge(label=label, completion=answer).status.value == "verified"
    item = {"id": "k", "checks": checks, "answer": answer}
    assert judge_item(item, root=None, config=CONFIG).status.value == "verified"


# --- D5: the adapters' own recursion over a label or a template ---------------------------

D5_DEPTHS = [300, 400, 490]


def _adapter_status(form: str, depth: int) -> str:
    checks, answer = _key_task(depth)
    if form == "label as a dict":
        return make_judge().judge(label={"checks": checks}, completion=answer).status.value
    template = {"checks": checks, "description": {"$label": "text"}}
    return make_judge(template).judge(label="x", completion=answer).status.value


@pytest.mark.parametrize("depth", D5_DEPTHS)
@pytest.mark.parametrize("form", ["label as a dict", "template"])
def test_an_adapters_verdict_does_not_depend_on_the_callers_stack(form: str, depth: int) -> None:
    """The task is within the cap and the answer right: ``judge_item`` verifies it."""
    checks, answer = _key_task(depth)
    item = {"id": "k", "checks": checks, "answer": answer}
    found = {
        "judge_item": judge_item(item, root=None, config=CONFIG).status.value,
        "adapter here": _adapter_status(form, depth),
        "adapter in a thread": _in_a_thread(lambda: _adapter_status(form, depth)),
        "adapter 400 frames deeper": _with_frames(400, lambda: _adapter_status(form, depth)),
    }
    assert set(found.values()) == {"verified"}, found


# --- D6: one deep line ends ``assay batch`` -----------------------------------------------


def _key_line(id: str, depth: int) -> str:
    """A batch line whose ``answer_key`` key value nests ``depth`` deep (built as text: no
    recursion here) and whose answer is wrong."""
    key = '{"t": ' + _nested(depth) + "}"
    return f'{{"id": "{id}", "checks": [{{"kind": "answer_key", "key": {key}}}], "answer": "1"}}'


@pytest.mark.slow
def test_a_deep_item_is_its_own_lines_problem_in_a_batch(tmp_path: Path) -> None:
    """Lines a parser reads (the envelope is uncapped) whose check holds a value 495-900 deep:
    each gets its own line (refuted, or an error naming it); the good lines are judged."""
    good = json.dumps(
        {"id": "ok", "checks": [{"kind": "answer_equals", "value": "x"}], "answer": "x"}
    )
    deep = [495, 600, 900]
    lines = [good.replace('"ok"', f'"ok{i}"') for i in range(len(deep) + 1)]
    for i, depth in enumerate(deep):
        lines.insert(2 * i + 1, _key_line(f"deep{depth}", depth))
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text("".join(line + "\n" for line in lines))
    run = subprocess.run(
        [str(ASSAY), "batch", str(episodes), "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found = {
        (result := json.loads(line))["id"]: result["status"]
        for line in run.stdout.splitlines()
        if line.strip()
    }
    assert len(found) == len(lines), (found, run.stderr[-500:])
    assert all(found[f"ok{i}"] == "verified" for i in range(len(deep) + 1)), found
    assert all(found[f"deep{depth}"] in ("refuted", "error") for depth in deep), found
