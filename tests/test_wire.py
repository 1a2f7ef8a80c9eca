"""One wire format: every JSON assay emits is a versioned document that validates against its
generated schema, the schemas in docs/schemas/ are current, and a reader refuses what it does
not know (another document, another major) instead of misreading it."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay._errors import InvalidInput
from assay._wire import WireModel, document_id, read_document
from assay.checks import AnswerKeyScore, score_answers
from assay.cli._schemas import DOCUMENTS, FOLDER, rendered
from assay.sandbox import SCHEMAS, Conformance, FixtureResult
from assay.sandbox._protocol import VERDICTS
from assay.status import Mode, Outcome, Report, combine

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@cache
def validator(document: str) -> jsonschema.Draft202012Validator:
    """The validator of the schema whose ``$id`` is ``document``, read from docs/schemas/."""
    for path in FOLDER.glob("*.json"):
        schema = json.loads(path.read_text())
        if schema["$id"] == document:
            jsonschema.Draft202012Validator.check_schema(schema)
            return jsonschema.Draft202012Validator(schema)
    raise AssertionError(f"no schema in docs/schemas/ for {document}")


def valid(data: Any) -> Any:
    """``data`` after checking it validates against the schema it names."""
    assert isinstance(data, dict) and isinstance(data.get("schema"), str), data
    validator(data["schema"]).validate(data)
    return data


def assay(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def lines(result: subprocess.CompletedProcess[str]) -> list[Any]:
    assert result.stdout.strip(), result.stderr
    return [valid(json.loads(line)) for line in result.stdout.splitlines()]


# (a) the schemas are current


def test_schema_files_are_current() -> None:
    files = rendered()
    on_disk = {p.name: p.read_text() for p in FOLDER.iterdir()}
    stale = sorted(name for name, text in files.items() if on_disk.get(name) != text)
    extra = sorted(set(on_disk) - set(files))
    assert not stale and not extra, f"docs/schemas is stale ({stale}, {extra}): run scripts/schemas"


def test_every_document_is_listed_once_and_snake_case() -> None:
    ids = [document_id(model) for model, _ in DOCUMENTS]
    assert len(set(ids)) == len(ids)
    for model, _ in DOCUMENTS:
        assert issubclass(model, WireModel)
        for name in _property_names(model.model_json_schema(by_alias=True, mode="serialization")):
            assert name == name.lower() and "-" not in name, f"{model.__name__}.{name}"


def test_every_document_model_has_a_schema_file() -> None:
    """A new document cannot be forgotten: every loaded WireModel with ``schema`` is listed."""
    import assay.cli._app  # noqa: F401  (loads every package that defines documents)

    def subclasses(model: type[WireModel]) -> list[type[WireModel]]:
        return [model, *(s for sub in model.__subclasses__() for s in subclasses(sub))]

    documents = {m for m in subclasses(WireModel) if "schema_" in m.model_fields}
    listed = {model for model, _ in DOCUMENTS}
    assert documents <= listed, f"not in assay.cli._schemas.DOCUMENTS: {documents - listed}"


def _property_names(schema: Any) -> list[str]:
    names: list[str] = []
    if isinstance(schema, dict):
        names += list(schema.get("properties", {}))
        for value in schema.values():
            names += _property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            names += _property_names(value)
    return names


def test_the_generator_runs_and_checks() -> None:
    script = ROOT / "scripts" / "schemas"
    assert script.stat().st_mode & 0o111, "scripts/schemas is executable"
    result = subprocess.run([str(script), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


# (b) every JSON assay emits validates against its schema


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.agda
@pytest.mark.coq
def test_check_reports_of_every_bundled_example_validate() -> None:
    tasks = sorted(EXAMPLES.glob("*.json")) + sorted((EXAMPLES / "hacks").glob("*.json"))
    result = assay("check", *(str(t.relative_to(ROOT)) for t in tasks))
    reports = lines(result)
    assert [r["task"] for r in reports] == [str(t.relative_to(ROOT)) for t in tasks]
    assert {r["schema"] for r in reports} == {"assay.report/1"}
    assert {r["mode"] for r in reports} <= {"all", "weighted"}
    statuses = {r["status"] for r in reports}
    assert {"verified", "refuted"} <= statuses, statuses


def test_a_failed_task_still_prints_a_valid_report(tmp_path: Path) -> None:
    task = tmp_path / "t.json"
    task.write_text(
        json.dumps({"answer": "x", "checks": [{"kind": "answer_equals", "value": "y"}]})
    )
    (report,) = lines(assay("check", str(task)))
    assert (report["task"], report["status"], report["mode"]) == (str(task), "refuted", "all")


@pytest.mark.parametrize("detail", [False, True])
def test_verify_validates(detail: bool) -> None:
    args = ["verify", "examples/verify/submission.json", "examples/verify/key.json"]
    (score,) = lines(assay(*args, *(["--detail"] if detail else [])))
    assert score["schema"] == "assay.answer_key_score/1"
    assert ("wrong" in score) is detail and score["accepted"] is True


def test_kinds_json_validates() -> None:
    result = assay("kinds", "--json")
    kinds = valid(json.loads(result.stdout))
    assert kinds["schema"] == "assay.kinds/1"
    assert {k["kind"] for k in kinds["kinds"]} >= {"answer_number", "program", "agda"}


@pytest.mark.bwrap
def test_checker_conform_json_validates(tmp_path: Path) -> None:
    sat = EXAMPLES / "checkers" / "sat"
    rows = lines(
        assay("checker", "conform", str(sat / "check.py"), str(sat / "fixtures"), "--json")
    )
    assert len(rows) == 6 and all(r["passed"] for r in rows)
    always_yes = tmp_path / "yes.py"
    always_yes.write_text(
        "import json\nopen('/output/result.json', 'w').write(json.dumps({'result': 'verified'}))\n"
    )
    rows = lines(assay("checker", "conform", str(always_yes), str(sat / "fixtures"), "--json"))
    assert sum(not r["passed"] for r in rows) == 5


@pytest.mark.agda
@pytest.mark.parametrize(("term", "status"), [("refl", "solved"), ("tt", "type_error")])
def test_hole_fill_validates(tmp_path: Path, term: str, status: str) -> None:
    obligation = tmp_path / "Sym.agda"
    obligation.write_text(
        "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
        "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' refl = {! !}\n"
    )
    (result,) = lines(assay("hole", "fill", str(obligation), "6", "13", term, "--no-stdlib"))
    assert result["status"] == status
    verdict = result["verdict"]
    assert verdict is not None and valid(verdict)["schema"] == "assay.verdict/1"
    assert (verdict["exit_code"] == 0) is verdict["green"] is (status == "solved")


@pytest.mark.agda
def test_hole_goal_validates(tmp_path: Path) -> None:
    obligation = tmp_path / "Sym.agda"
    obligation.write_text(
        "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
        "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' refl = {! !}\n"
    )
    args = ["hole", "goal", str(obligation), "6", "13", "--no-stdlib"]
    (plain,) = lines(assay(*args))
    (inferred,) = lines(assay(*args, "--infer", "refl"))
    assert (plain["schema"], plain["goal"], plain["inferred"]) == ("assay.goal/1", "x ≡ x", None)
    assert inferred["inferred"]["term"] == "refl" and "≡" in inferred["inferred"]["type"]


NASTY = {
    "text": "\ud800\x1b[2J",
    "nan": float("nan"),
    "bytes": b"\xff",
    "inner": {3: {1, 2}},
    "deep": [[[]]],
}


@pytest.mark.parametrize("mode", list(Mode))
def test_library_reports_validate_whatever_the_evidence(mode: Mode) -> None:
    outcomes = [
        Outcome.refuted("wrong \udfff", NASTY).with_kind("answer_equals"),
        Outcome.verified().with_kind("file_exists"),
        Outcome.inconclusive("no lake"),
        Outcome.error("boom", {"x": float("inf")}),
    ]
    report = valid(combine(outcomes, mode, [1.0, 2.0, 1.0, 1.0]).to_json())
    assert report["mode"] == mode.value and report["task"] is None
    json.dumps(report, allow_nan=False).encode()  # encodable as strict UTF-8 JSON


def test_library_scores_and_conformance_validate() -> None:
    score = score_answers({"outputs": {"a": 1, "b": 2, "c": 3}}, {"a": 1, "b": 3, "d": 4})
    valid(score.to_json())
    valid(score.to_json(detail=False))
    valid(score_answers([], {"a": 1}).to_json())
    rows = [
        FixtureResult(name="sat-1", expected="verified", got="verified", detail="ok"),
        FixtureResult(name="unsat-1", expected="refuted", got="error", detail="exit 1"),
    ]
    for row in rows:
        valid(row.to_json())
    conformance = valid(
        Conformance(digest="d" * 64, results=rows[:1], held_back=rows[1:]).to_json()
    )
    assert conformance["passed"] is False and conformance["results"][0]["passed"] is True


def test_the_checker_protocol_schemas_agree_with_the_code() -> None:
    """The protocol's files are a contract with third-party checkers: kept by hand, beside it."""
    manifest = json.loads((SCHEMAS / "manifest.schema.json").read_text())
    result = json.loads((SCHEMAS / "result.schema.json").read_text())
    for schema in (manifest, result):
        jsonschema.Draft202012Validator.check_schema(schema)
    assert result["properties"]["result"]["enum"] == list(VERDICTS)
    assert manifest["properties"]["schema"]["const"] == manifest["$id"] == "assay.manifest/1"
    assert set(manifest["required"]) == {"schema", "artifacts", "references"}


# (c) a reader refuses what it does not know


def test_documents_read_back_exactly() -> None:
    report = combine([Outcome.refuted("x", {"a": 1}).with_kind("k")], Mode.WEIGHTED)
    assert read_document(Report, report.to_json()) == report
    score = score_answers({"outputs": {"a": 1}}, {"a": 1})
    assert read_document(AnswerKeyScore, score.to_json()) == score
    conformance = Conformance(
        digest="d", results=[FixtureResult(name="f", expected="refuted", got="refuted", detail="")]
    )
    assert read_document(Conformance, conformance.to_json()) == conformance


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("assay.report/2", "'assay.report/2' is another major version than this assay reads"),
        ("assay.report/0", "another major version"),
        ("assay.verdict/1", "'assay.verdict/1' is not 'assay.report/1'"),
        (None, "missing"),
        (1, "1 is not 'assay.report/1'"),
    ],
)
def test_a_reader_refuses_another_document_or_major(schema: Any, message: str) -> None:
    data = combine([Outcome.verified()]).to_json()
    if schema is None:
        del data["schema"]
    else:
        data["schema"] = schema
    with pytest.raises(InvalidInput, match=r"^schema: ") as caught:
        read_document(Report, data)
    assert caught.value.where == "schema" and message in str(caught.value)


def test_a_reader_names_the_bad_field() -> None:
    data = combine([Outcome.verified()]).to_json()
    data["outcomes"][0]["status"] = "passed"
    with pytest.raises(InvalidInput) as caught:
        read_document(Report, data)
    assert caught.value.where == "outcomes.0.status"
    with pytest.raises(InvalidInput, match="must be a JSON object"):
        read_document(Report, [data])


def test_a_stored_conformance_of_another_major_is_a_miss(tmp_path: Path) -> None:
    from assay._signed import SignedStore
    from assay.sandbox._conform import _stored

    store = SignedStore(tmp_path / "store", "conformance", tmp_path / "key")
    digest, other = "d" * 64, "e" * 64
    passed = Conformance(
        digest=digest,
        results=[FixtureResult(name="f", expected="refuted", got="refuted", detail="")],
    )
    store.put(digest, passed.to_json())
    assert _stored(store, digest) == passed
    assert _stored(store, other) is None
    store.put(other, passed.to_json())  # stored under another digest than it names
    assert _stored(store, other) is None
    store.put(digest, {**passed.to_json(), "schema": "assay.conformance/2"})
    assert _stored(store, digest) is None
