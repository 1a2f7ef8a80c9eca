"""Attacks on the item path after svcspeed2's change (adv-svc2): every item read by the pydantic
``_Item`` model, ``Episode`` built by its own ``__init__``, the verifier-file scan skipped for
kinds that declare no ``verifier_fields``, and ``assay batch`` skipping the re-encoding proof
(``Job.from_json``).

The attacker wants wrong work called ``verified``, a verdict that differs between the HTTP
service, ``assay batch`` and in-process judging, an invalid item accepted silently, or one
item's fault failing a batch. Findings (all four fixed; their tests pass):

- F1: an answer's nesting depth decides its verdict by the caller's Python stack depth. The
  answer kinds read the answer with ``loads_strict``, whose limit is the interpreter's recursion
  limit minus the frames already on the stack, so an answer nested ~900-1000 deep is read (and
  verified) in one interface and "not a strict JSON submission: RecursionError" (refuted) in
  another; the candidate picks the depth. Not caused by svcspeed2's change (it predates it).
  Fixed (session 9): ``loads_strict`` refuses nesting past ``JSON_DEPTH_LIMIT`` (500) before
  parsing, whoever calls; ``json_schema`` reads its document and schema with a lower cap
  (``SCHEMA_DEPTH_LIMIT``, 150), so the validator's own recursion never meets the interpreter's
  limit.
- F2: a ``dict`` subclass whose ``items``/``get`` lie (Python API only): the model reads the
  dict's real storage, while ``Episode.body`` (the fingerprint, the JSON proof) is built from
  ``data.items()``, so the body describes other work than the work judged. The removed
  hand-written reader read through the same Python-level view as the body.
- F3: a label from a dataframe (adapters): ``integrations.plain`` keeps subclasses of
  ``float``/``str``/``int`` (``np.float64``, ``np.str_``, an ``IntEnum``) as they are, and
  ``answer_key`` compares type-strictly, so verl/TRL refute the right answer that the service
  (the same label as JSON) verifies. Not caused by svcspeed2's change.
- F4: a path holding a lone surrogate (``"w\\ud800"``, valid JSON text) makes
  ``Path.resolve`` raise ``UnicodeEncodeError`` in ``_inside``, which is not ``InvalidInput``:
  ``judge_item`` raises (it must never), ``assay batch``'s worker process dies on the line
  (a respawn per such line), and the service answers "assay failed reading this item" instead
  of naming the field. Not caused by svcspeed2's change.

Every other attack failed and is a passing test: batch lines that are not plain JSON data
(NaN, Infinity, ``1e999``, ``1e-999``, duplicate keys, overlong ints, lone surrogates) give the
batch the same result as the in-process model path; no kind that names no verifier field names
a verifier file, and escaping paths are refused through the service for every kind that does;
``Episode`` equality, ``replace`` and idempotency keys hold for text subclasses and lookalike
items (an ``Episode`` is not hashable, as before: its ``Task`` holds lists).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from assay import CheckContext, Config, build_checks, run_checks
from assay._errors import InvalidInput
from assay._strict import JSON_DEPTH_LIMIT, StrictJSONError, loads_strict
from assay.checks._kinds._json_schema import SCHEMA_DEPTH_LIMIT
from assay.checks._registry import Kind, all_kinds
from assay.checks._spec import Spec
from assay.episodes import judge_item, parse_episode
from assay.executors._base import judge_job
from assay.executors._batch import _job
from assay.integrations import verl
from assay.integrations._core import make_judge
from assay.service import Settings, create_app

CONFIG = Config()
KEY_CHECKS = [{"kind": "answer_key", "key": {"t": 1}}]
EQUALS = [{"kind": "answer_equals", "value": "42"}]
ASSAY = Path(sys.executable).with_name("assay")


@pytest.fixture(scope="module")
def service() -> Iterator[TestClient]:
    with TestClient(create_app(Settings())) as client:
        yield client


# --- F1: the answer's nesting depth against the caller's stack depth ----------------------

DEPTHS = [*range(JSON_DEPTH_LIMIT - 8, JSON_DEPTH_LIMIT + 8), *range(880, 1000, 8)]
"""Around the fixed limit, and around the interpreter's recursion limit (1000), where each
interface's threshold lay before the limit."""


def _deep_answer(depth: int) -> str:
    """A correct submission for ``KEY_CHECKS`` whose ignored ``reported_reward`` nests deep."""
    return '{"outputs": {"t": 1}, "reported_reward": %s}' % ("[" * depth + "]" * depth)


def _deep_item(depth: int) -> dict[str, Any]:
    return {"id": f"d{depth}", "checks": KEY_CHECKS, "answer": _deep_answer(depth)}


def _statuses_in_process() -> list[str]:
    checks = build_checks(KEY_CHECKS)
    return [run_checks(checks, CheckContext(answer=_deep_answer(d))).status.value for d in DEPTHS]


def _statuses_in_a_thread() -> list[str]:
    found: list[str] = []
    worker = threading.Thread(
        target=lambda: found.extend(
            judge_item(_deep_item(d), root=None, config=CONFIG).status.value for d in DEPTHS
        )
    )
    worker.start()
    worker.join(timeout=60)
    return found


def _statuses_by_the_service(service: TestClient) -> list[str]:
    reply = service.post("/v1/verify", json={"items": [_deep_item(d) for d in DEPTHS]})
    assert reply.status_code == 200, reply.text
    return [result["status"] for result in reply.json()["results"]]


def _statuses_by_get_reward(service: TestClient) -> list[str]:
    label = json.dumps({"checks": KEY_CHECKS})
    answers = [_deep_answer(d) for d in DEPTHS]
    reply = service.post(
        "/get_reward",
        json={
            "query": ["Q" + a for a in answers],
            "prompts": ["Q"] * len(answers),
            "labels": [label] * len(answers),
        },
    )
    assert reply.status_code == 200, reply.text
    logs = reply.json()["extra_logs"]
    return [
        next(s for s in ("verified", "refuted", "inconclusive", "error") if logs[s][i] == 1.0)
        for i in range(len(answers))
    ]


def _statuses_by_the_adapter() -> list[str]:
    judge = make_judge()
    label = json.dumps({"checks": KEY_CHECKS})
    return [judge.judge(label=label, completion=_deep_answer(d)).status.value for d in DEPTHS]


def _statuses_by_assay_batch(tmp_path: Path) -> list[str]:
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text("".join(json.dumps(_deep_item(d)) + "\n" for d in DEPTHS))
    run = subprocess.run(
        [str(ASSAY), "batch", str(episodes), "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert len(lines) == len(DEPTHS), run.stderr[-2000:]
    return [line["status"] for line in lines]


@pytest.mark.slow
def test_an_answers_nesting_gets_one_verdict_on_every_interface(
    service: TestClient, tmp_path: Path
) -> None:
    """The candidate picks the depth: every interface must give each depth the same status."""
    by_interface = {
        "run_checks": _statuses_in_process(),
        "judge_item in a thread": _statuses_in_a_thread(),
        "/v1/verify": _statuses_by_the_service(service),
        "/get_reward": _statuses_by_get_reward(service),
        "trl/verl adapter": _statuses_by_the_adapter(),
        "assay batch": _statuses_by_assay_batch(tmp_path),
    }
    differing = {
        depth: {name: found[i] for name, found in by_interface.items()}
        for i, depth in enumerate(DEPTHS)
        if len({found[i] for found in by_interface.values()}) > 1
    }
    assert not differing, differing


SCHEMA_DEPTHS = [*range(SCHEMA_DEPTH_LIMIT - 6, SCHEMA_DEPTH_LIMIT + 6), *range(220, 262, 3)]
"""Around the fixed limit, and around where jsonschema's recursive validator (a few frames a
level) met the interpreter's limit before it."""


def _schema_items(root: Path) -> list[dict[str, Any]]:
    """A workspace per depth holding nested arrays, each valid under a recursive schema."""
    (root / "schema.json").write_text(json.dumps({"type": "array", "items": {"$ref": "#"}}))
    items = []
    for depth in SCHEMA_DEPTHS:
        (root / f"w{depth}").mkdir()
        (root / f"w{depth}" / "a.json").write_text("[" * depth + "]" * depth)
        check = {"kind": "json_schema", "artifact": "a.json", "schema": "schema.json"}
        items.append({"id": f"j{depth}", "workspace": f"w{depth}", "checks": [check]})
    return items


@pytest.mark.slow
def test_a_workspace_documents_nesting_gets_one_verdict_on_every_interface(
    tmp_path: Path,
) -> None:
    items = _schema_items(tmp_path)
    in_thread: list[str] = []
    worker = threading.Thread(
        target=lambda: in_thread.extend(
            judge_item(it, root=tmp_path, config=CONFIG).status.value for it in items
        )
    )
    worker.start()
    worker.join(timeout=60)
    with TestClient(create_app(Settings(workspace_root=tmp_path))) as client:
        reply = client.post("/v1/verify", json={"items": items})
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text("".join(json.dumps(it) + "\n" for it in items))
    run = subprocess.run(
        [str(ASSAY), "batch", str(episodes), "--jobs", "1", "--workspace-root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    by_interface = {
        "judge_item": [judge_item(it, root=tmp_path, config=CONFIG).status.value for it in items],
        "judge_item in a thread": in_thread,
        "/v1/verify": [result["status"] for result in reply.json()["results"]],
        "assay batch": [json.loads(line)["status"] for line in run.stdout.splitlines()],
    }
    assert all(len(found) == len(items) for found in by_interface.values()), run.stderr
    differing = {
        depth: {name: found[i] for name, found in by_interface.items()}
        for i, depth in enumerate(SCHEMA_DEPTHS)
        if len({found[i] for found in by_interface.values()}) > 1
    }
    assert not differing, differing
    statuses = dict(zip(SCHEMA_DEPTHS, by_interface["judge_item"], strict=True))
    assert statuses[SCHEMA_DEPTH_LIMIT] == "verified"
    assert statuses[SCHEMA_DEPTH_LIMIT + 1] == "refuted"


def test_the_depths_tried_reach_both_verdicts() -> None:
    """F1's range is not vacuous: shallow answers are verified, answers past the limit not."""
    statuses = dict(zip(DEPTHS, _statuses_in_process(), strict=True))
    assert statuses[JSON_DEPTH_LIMIT - 1] == "verified"  # the answer object adds one level
    assert statuses[JSON_DEPTH_LIMIT] == statuses[JSON_DEPTH_LIMIT + 7] == "refuted"
    checks = build_checks(KEY_CHECKS)
    too_deep = run_checks(checks, CheckContext(answer=_deep_answer(5000))).status.value
    assert too_deep == "refuted"  # never verified: refusing to read is never a pass


# --- F2: a lying mapping (Python API) --------------------------------------------------------


class _ItemsLie(dict):  # type: ignore[type-arg]
    """Shows another answer to ``items()`` (and so to the body) than the dict holds."""

    def items(self) -> Any:
        shown = dict(super().items())
        shown["answer"] = "43"
        return shown.items()


class _AllViewsLie(_ItemsLie):
    """Lies consistently through ``items``, ``get``, ``keys``, ``[]`` and ``iter``."""

    def _shown(self) -> dict[str, Any]:
        return dict(self.items())

    def get(self, key: Any, default: Any = None) -> Any:
        return self._shown().get(key, default)

    def keys(self) -> Any:
        return self._shown().keys()

    def __getitem__(self, key: Any) -> Any:
        return self._shown()[key]

    def __iter__(self) -> Any:
        return iter(self._shown())


def _body_matches_the_work(lying: type[dict[str, Any]]) -> None:
    data = lying(id="x", checks=EQUALS, answer="42", idempotency_key="k")
    try:
        episode = parse_episode(data, root=None, config=CONFIG)
    except InvalidInput:
        return  # refusing a mapping that is not a plain dict is right too
    assert episode.body.get("answer") == episode.task.context.answer


def test_a_mapping_lying_through_items_is_refused_or_judged_as_its_body_says() -> None:
    _body_matches_the_work(_ItemsLie)


def test_a_mapping_lying_through_every_view_is_judged_as_its_body_says() -> None:
    """A liar whose ``__iter__`` lies too is read through the mapping protocol by the model."""
    _body_matches_the_work(_AllViewsLie)


# --- F3: a dataframe's scalar subclasses in a label (adapters) ---------------------------


class _Small(enum.IntEnum):
    THREE = 3


SUBCLASS_VALUES: dict[str, tuple[Any, Any]] = {
    "np.float64": (np.float64(1.5), 1.5),
    "np.float64 whole": (np.float64(2.0), 2.0),
    "np.str_": (np.str_("a"), "a"),
    "IntEnum": (_Small.THREE, 3),
    "np.float64 in a list": ([np.float64(1.5), 2.5], [1.5, 2.5]),
}


@pytest.mark.parametrize("value", list(SUBCLASS_VALUES.values()), ids=list(SUBCLASS_VALUES))
def test_a_label_from_a_dataframe_gets_the_services_verdict(
    value: tuple[Any, Any], service: TestClient
) -> None:
    odd, same = value
    label = {"checks": [{"kind": "answer_key", "key": {"t": odd}}]}
    as_json = json.dumps({"checks": [{"kind": "answer_key", "key": {"t": same}}]})
    solution = json.dumps({"outputs": {"t": same}})
    reply = service.post(
        "/get_reward", json={"query": ["Q" + solution], "prompts": ["Q"], "labels": [as_json]}
    )
    assert reply.json()["extra_logs"]["verified"] == [1.0]
    assert verl.make_reward().compute_score("d", solution, as_json)["status"] == "verified"
    assert verl.make_reward().compute_score("d", solution, label)["status"] == "verified"


def test_a_number_template_takes_a_dataframes_scalars() -> None:
    """Where the spec's own type reads the label (answer_number), a numpy scalar is fine."""
    template = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}
    reward = verl.make_reward(template)
    for value in (np.float64(1.5), np.int64(3), _Small.THREE):
        answer = str(float(value)) if isinstance(value, np.floating) else str(int(value))
        assert reward.compute_score("d", answer, value)["status"] == "verified"


# --- Job.from_json: batch lines that are not plain JSON data -------------------------------

NINES = "9" * 400
_KEY_T = '{"id": "a", "checks": [{"kind": "answer_key", "key": {"t": T}}], "answer": "A"}'
ODD_LINES = {
    "nan": '{"id": "a", "checks": [{"kind": "answer_number", "value": NaN}], "answer": "4"}',
    "infinity": '{"id": "a", "checks": [{"kind": "answer_key", "key": {"t": Infinity}}], "answer": "{}"}',
    "overflow": '{"id": "a", "checks": [{"kind": "answer_number", "value": 1e999}], "answer": "1e999"}',
    "underflow": '{"id": "a", "checks": [{"kind": "answer_number", "value": 1e-999}], "answer": "0"}',
    "duplicate key": '{"id": "a", "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "5", "answer": "4"}',
    "duplicate in check": '{"id": "a", "checks": [{"kind": "answer_equals", "value": "5", "value": "4"}], "answer": "4"}',
    "overlong int": _KEY_T.replace("T", "9" * 5000).replace("A", "{}"),
    "huge int in key": _KEY_T.replace("T", NINES).replace(
        "A", '{\\"outputs\\": {\\"t\\": ' + NINES + "}}"
    ),
    "huge int vs float": _KEY_T.replace("T", NINES).replace(
        "A", '{\\"outputs\\": {\\"t\\": 1e400}}'
    ),
    "lone surrogate answer": '{"id": "a", "checks": [{"kind": "answer_equals", "value": "\\ud800"}], "answer": "\\ud800"}',
    "lone surrogate id": '{"id": "\\udfff", "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"}',
    "surrogate pair vs lone": '{"id": "a", "checks": [{"kind": "answer_equals", "value": "\\ud83d\\ude00"}], "answer": "\\ud83d"}',
    "negative zero": '{"id": "a", "checks": [{"kind": "answer_key", "key": {"t": -0.0}}], "answer": "{\\"outputs\\": {\\"t\\": 0}}"}',
    "bool for int": '{"id": "a", "checks": [{"kind": "answer_key", "key": {"t": 1}}], "answer": "{\\"outputs\\": {\\"t\\": true}}"}',
    "bool weight": '{"id": "a", "checks": [{"kind": "answer_equals", "value": "4", "weight": true}], "answer": "4"}',
    "int id": '{"id": 7, "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"}',
    "key as number": '{"id": "a", "idempotency_key": 1, "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"}',
    "mode as list": '{"id": "a", "mode": ["all"], "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"}',
}


@pytest.mark.parametrize("line", list(ODD_LINES.values()), ids=list(ODD_LINES))
def test_an_odd_batch_line_gets_the_model_paths_result(line: str) -> None:
    """A batch line (``from_json=True``) is judged as the checked Python path judges it, and a
    line strict JSON refuses is one refused line, never verified."""
    job = _job(line.encode("utf-8", "surrogatepass"), "line 1", set())
    batch = judge_job(job, None, CONFIG)
    try:
        data = loads_strict(line)
    except StrictJSONError:
        assert job.refusal is not None
        assert batch.status.value == "error"
        return
    assert job.from_json and job.refusal is None
    model = judge_item(data, root=None, config=CONFIG, where="line 1").to_json()
    batch_line = json.loads(batch.line)
    assert batch_line.pop("input_sha256") == job.digest
    assert batch_line == json.loads(json.dumps(model))
    assert batch.status.value == model["status"]


@pytest.mark.slow
def test_an_odd_line_among_good_ones_is_only_its_own_error(tmp_path: Path) -> None:
    """Through the real ``assay batch``: every odd line is one result, the good lines verified."""
    good = '{"id": "g%d", "checks": [{"kind": "answer_equals", "value": "4"}], "answer": "4"}'
    lines = []
    for index, line in enumerate(ODD_LINES.values()):
        lines += [good % index, line.replace('"id": "a"', f'"id": "odd{index}"')]
    episodes = tmp_path / "odd.jsonl"
    episodes.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + b"\n")
    run = subprocess.run(
        [str(ASSAY), "batch", str(episodes), "--jobs", "1"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    results = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert len(results) == len(lines), run.stderr[-2000:]
    assert [r["status"] for r in results[0::2]] == ["verified"] * len(ODD_LINES)


# --- the verifier-file scan skip ---------------------------------------------------------


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda kind: kind.name)
def test_a_kind_naming_no_verifier_field_names_no_verifier_file(kind: Kind) -> None:
    """The scan is skipped when ``verifier_fields`` is empty: sound only while no kind names a
    verifier file another way (an overridden ``verifier_files``)."""
    spec = kind.spec
    if not spec.verifier_fields:
        assert spec.verifier_files is Spec.verifier_files


def _path_item(kind_check: dict[str, Any]) -> dict[str, Any]:
    return {"id": "p", "checks": [kind_check], "answer": "1"}


PATH_CHECKS: dict[str, Callable[[str], dict[str, Any]]] = {
    "sql_query": lambda p: {
        "kind": "sql_query",
        "database": p,
        "query": "select 1",
        "compare": "answer_value",
    },
    "json_schema": lambda p: {"kind": "json_schema", "artifact": "a.json", "schema": p},
    "sat_assignment": lambda p: {"kind": "sat_assignment", "artifact": "a.txt", "formula": p},
    "hidden_python": lambda p: {"kind": "hidden_python", "file": p},
    "program": lambda p: {"kind": "program", "entry": "main.py", "checker": p},
}
ESCAPES = ["../outside.txt", "/etc/passwd", "link_out", "sub/../../outside.txt", "./../outside.txt"]


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("kind", sorted(PATH_CHECKS))
def test_a_verifier_path_out_of_the_root_is_refused_by_the_service(
    kind: str, escape: str, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("SECRET")
    (root / "link_out").symlink_to(tmp_path / "outside.txt")
    with TestClient(create_app(Settings(workspace_root=root))) as client:
        reply = client.post("/v1/verify", json={"items": [_path_item(PATH_CHECKS[kind](escape))]})
    assert reply.status_code == 200, reply.text
    result = reply.json()["results"][0]
    assert result["status"] == "error", result
    assert "SECRET" not in reply.text and str(tmp_path) not in reply.text


# --- F4: a path the file system cannot encode -----------------------------------------

UNENCODABLE = "w\ud800"
"""A lone high surrogate: valid in a JSON string, not encodable even with surrogateescape."""
UNENCODABLE_ITEMS: dict[str, tuple[dict[str, Any], str]] = {
    "workspace": (
        {"workspace": UNENCODABLE, "checks": [{"kind": "file_exists", "path": "a"}]},
        "workspace",
    ),
    "task.workspace": (
        {"task": {"workspace": UNENCODABLE, "checks": [{"kind": "file_exists", "path": "a"}]}},
        "task.workspace",
    ),
    "sql database": (
        {"checks": [PATH_CHECKS["sql_query"](UNENCODABLE)], "answer": "1"},
        "checks[0]",
    ),
    "json_schema schema": (
        {"checks": [PATH_CHECKS["json_schema"](UNENCODABLE)]},
        "checks[0]",
    ),
    "hidden_python file": ({"checks": [PATH_CHECKS["hidden_python"](UNENCODABLE)]}, "checks[0]"),
    "program reference": (
        {"checks": [{"kind": "program", "checker": "c.py", "references": {"r": UNENCODABLE}}]},
        "checks[0]",
    ),
}


def _unencodable(name: str) -> dict[str, Any]:
    return {"id": f"u-{name.replace(' ', '-')}", **UNENCODABLE_ITEMS[name][0]}


def _names_the_field(detail: str, field: str) -> bool:
    return f"{field}" in detail and "failed" not in detail and "died" not in detail


@pytest.mark.parametrize("name", list(UNENCODABLE_ITEMS))
def test_an_unencodable_path_is_refused_naming_its_field(name: str, tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text("")
    field = UNENCODABLE_ITEMS[name][1]
    with TestClient(create_app(Settings(workspace_root=tmp_path))) as client:
        reply = client.post(
            "/v1/verify",
            content=json.dumps({"items": [_unencodable(name)]}).encode(),
            headers={"content-type": "application/json"},
        )
    served = reply.json()["results"][0]
    assert served["status"] == "error"
    assert _names_the_field(served["outcomes"][0]["detail"], field), served
    result = judge_item(_unencodable(name), root=tmp_path, config=CONFIG).to_json()
    assert result["status"] == "error"
    assert _names_the_field(result["outcomes"][0]["detail"], field), result


@pytest.mark.slow
def test_an_unencodable_path_in_a_batch_is_its_lines_own_refusal(tmp_path: Path) -> None:
    good = {"id": "g", "checks": EQUALS, "answer": "42"}
    lines = [good, *(_unencodable(name) for name in UNENCODABLE_ITEMS), {**good, "id": "h"}]
    episodes = tmp_path / "u.jsonl"
    episodes.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = subprocess.run(
        [str(ASSAY), "batch", str(episodes), "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    results = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert [r["status"] for r in results] == [
        "verified",
        *["error"] * len(UNENCODABLE_ITEMS),
        "verified",
    ]
    for result, name in zip(results[1:-1], UNENCODABLE_ITEMS, strict=True):
        field = UNENCODABLE_ITEMS[name][1]
        assert _names_the_field(result["outcomes"][0]["detail"], field), result
    assert "Traceback" not in run.stderr


# --- Episode: equality, hashing, replace, idempotency --------------------------------------


class _LyingText(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


@pytest.mark.parametrize("field", ["id", "answer", "idempotency_key", "description"])
def test_a_text_subclass_becomes_plain_text(field: str) -> None:
    data: dict[str, Any] = {"id": "a", "checks": EQUALS, "answer": "42", field: _LyingText("7")}
    try:
        episode = parse_episode(data, root=None, config=CONFIG)
    except InvalidInput:
        return
    assert type(episode.id) is str
    assert type(episode.task.context.answer) is str
    assert episode.idempotency_key is None or type(episode.idempotency_key) is str


def test_episodes_of_other_work_are_not_equal_and_replace_keeps_the_class() -> None:
    a = parse_episode({"id": "a", "checks": EQUALS, "answer": "42"}, root=None, config=CONFIG)
    b = parse_episode({"id": "a", "checks": EQUALS, "answer": "43"}, root=None, config=CONFIG)
    assert a != b
    c = dataclasses.replace(a, id="c")
    assert type(c) is type(a) and c.id == "c" and c.task == a.task and c.body == a.body
    assert a == dataclasses.replace(a) and a.fingerprint == dataclasses.replace(a).fingerprint
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.id = "z"  # type: ignore[misc]


LOOKALIKES = {
    "answer differs": {"answer": "43"},
    "same answer, other check": {"checks": [{"kind": "answer_equals", "value": "43"}]},
    "same work as a task": {"checks": None, "task": {"checks": EQUALS, "answer": "42"}},
    "other kind, same value": {"checks": [{"kind": "answer_contains", "value": "42"}]},
    "weight differs": {"checks": [{"kind": "answer_equals", "value": "42", "weight": 2.0}]},
    "description only": {"description": "other"},
    "mode given": {"mode": "weighted"},
}


@pytest.mark.parametrize("change", list(LOOKALIKES.values()), ids=list(LOOKALIKES))
def test_a_key_reused_for_a_lookalike_item_is_never_answered_with_the_first_verdict(
    change: dict[str, Any], service: TestClient
) -> None:
    key = f"adv-svc2-{sorted(change)}-{json.dumps(change, sort_keys=True)}"
    first = {"id": "a", "checks": EQUALS, "answer": "42", "idempotency_key": key}
    second = {**first, "id": "b", **change}
    second = {k: v for k, v in second.items() if v is not None}
    replies = [
        service.post("/v1/verify", json={"items": [it]}).json()["results"][0]
        for it in (first, second)
    ]
    assert replies[0]["status"] == "verified"
    assert replies[1]["status"] == "error" and "idempotency_key" in json.dumps(replies[1])


def test_the_same_work_under_a_key_in_another_key_order_is_answered_under_its_own_id(
    service: TestClient,
) -> None:
    first = {"id": "a", "checks": EQUALS, "answer": "42", "idempotency_key": "adv-svc2-order"}
    again = {"answer": "42", "idempotency_key": "adv-svc2-order", "checks": EQUALS, "id": "b"}
    replies = [
        service.post("/v1/verify", json={"items": [it]}).json()["results"][0]
        for it in (first, again)
    ]
    assert [r["status"] for r in replies] == ["verified", "verified"]
    assert replies[1]["id"] == "b"
