"""program: external checkers over /input, /output, run for real in bubblewrap."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay import CheckContext, InvalidSpec, Status, build_check
from assay.sandbox import SCHEMAS, Sandbox

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def task(tmp_path: Path, checker_body: str) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "answer.txt").write_text("42\n")
    (tmp_path / "ref.txt").write_text("42\n")
    (tmp_path / "checker.py").write_text(textwrap.dedent(checker_body))
    return tmp_path


def run(sandbox: Sandbox, root: Path, **spec: Any) -> Any:
    spec = {
        "kind": "program",
        "checker": "checker.py",
        "artifacts": {"answer": "answer.txt"},
        "references": {"truth": "ref.txt"},
        **spec,
    }
    return build_check(spec).run(
        CheckContext(workspace=root / "ws", base_dir=root, sandbox=sandbox)
    )


COMPARE = """
    import json, pathlib
    manifest = json.loads(pathlib.Path("/input/manifest.json").read_text())
    got = pathlib.Path("/input/artifacts/answer/answer.txt").read_text()
    want = pathlib.Path("/input/reference/truth/ref.txt").read_text()
    pathlib.Path("/output/evidence").mkdir()
    pathlib.Path("/output/evidence/manifest-copy.json").write_text(json.dumps(manifest))
    result = "verified" if got == want else "refuted"
    pathlib.Path("/output/result.json").write_text(json.dumps({"result": result, "summary": f"compared: {result}"}))
"""


def test_a_checker_concludes(sandbox: Sandbox, tmp_path: Path) -> None:
    outcome = run(sandbox, task(tmp_path, COMPARE))
    assert outcome.status is V, outcome.detail
    assert outcome.detail == "compared: verified"
    evidence = outcome.evidence
    assert evidence["isolation"] == "bwrap"
    assert len(evidence["result_sha256"]) == 64
    assert evidence["evidence_files"][0]["path"] == "evidence/manifest-copy.json"
    manifest = evidence["inputs"]
    jsonschema.validate(manifest, json.loads((SCHEMAS / "manifest.schema.json").read_text()))
    assert manifest["artifacts"]["answer"][0]["path"] == "artifacts/answer/answer.txt"
    assert manifest["references"]["truth"][0]["size"] == 3


def test_a_refuting_checker(sandbox: Sandbox, tmp_path: Path) -> None:
    root = task(tmp_path, COMPARE)
    (root / "ws" / "answer.txt").write_text("41\n")
    assert run(sandbox, root).status is R


BROKEN = {
    "no_result": "pass",
    "not_json": "open('/output/result.json', 'w').write('verified')",
    "says_error": "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'error'}))",
    "says_pass": "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'pass'}))",
    "nan": "open('/output/result.json', 'w').write('{\"result\": \"verified\", \"score\": NaN}')",
    "oversized": "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'verified', 'pad': 'x' * 70000}))",
    "not_object": "open('/output/result.json', 'w').write('[\"verified\"]')",
    "non_zero_exit": "import json, sys; open('/output/result.json', 'w').write(json.dumps({'result': 'verified'})); sys.exit(3)",
    "crash": "raise RuntimeError('checker bug')",
    "signal": "import os, signal, json; open('/output/result.json', 'w').write(json.dumps({'result': 'verified'})); os.kill(os.getpid(), signal.SIGKILL)",
    "hang": "import time; time.sleep(60)",
    "symlink_to_host_file": "import os; os.symlink('/etc/shadow', '/output/result.json')",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_checker_is_an_error_never_a_finding(
    sandbox: Sandbox, tmp_path: Path, name: str
) -> None:
    outcome = run(sandbox, task(tmp_path, BROKEN[name]), timeout=2)
    assert outcome.status is E, (name, outcome.detail)
    assert "says nothing about the submission" in outcome.detail


def test_an_inconclusive_checker(sandbox: Sandbox, tmp_path: Path) -> None:
    body = "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'inconclusive', 'summary': 'instance unreadable'}))"
    outcome = run(sandbox, task(tmp_path, body))
    assert (outcome.status, outcome.detail) == (I, "instance unreadable")


def test_the_checker_cannot_write_its_inputs(sandbox: Sandbox, tmp_path: Path) -> None:
    body = """
        import json
        try:
            open('/input/artifacts/answer/answer.txt', 'w').write('tampered')
            result = 'verified'
        except OSError:
            result = 'refuted'
        open('/output/result.json', 'w').write(json.dumps({'result': result}))
    """
    root = task(tmp_path, body)
    assert run(sandbox, root).status is R
    assert (root / "ws" / "answer.txt").read_text() == "42\n"


def test_missing_artifact_and_reference(sandbox: Sandbox, tmp_path: Path) -> None:
    root = task(tmp_path, COMPARE)
    missing = run(sandbox, root, artifacts={"answer": "nope.txt"})
    assert missing.status is R
    assert "does not provide artifact 'answer'" in missing.detail
    assert run(sandbox, root, references={"truth": "nope.txt"}).status is I
    assert run(sandbox, root, artifacts={"answer": "../ref.txt"}).status is R


def test_results_schema_accepts_exactly_the_three_conclusions() -> None:
    schema = json.loads((SCHEMAS / "result.schema.json").read_text())
    for result in ("verified", "refuted", "inconclusive"):
        jsonschema.validate({"result": result, "summary": "x"}, schema)
    for bad in ({"result": "error"}, {"summary": "x"}, {"result": "verified", "summary": 3}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "give 'checker'"),
        ({"checker": "c.py", "artifacts": {"bad/role": "x"}}, "not a role or key name"),
        ({"command": []}, "command"),
    ],
)
def test_program_specs(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        build_check({"kind": "program", **spec})
