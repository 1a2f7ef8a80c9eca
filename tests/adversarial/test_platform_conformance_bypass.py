"""A ``program`` checker that never reproduced its conformance fixtures makes work verified.

The gate keys conformance by ``program:<sha256 of the checker reference>``. A program check that
names no ``checker`` (only a ``command``) gets the id ``assay:program@VERSION``, which the gate
never asks about. And a checker counts as conformed for the revision when ANY check spec that
uses it reproduced the fixtures, so a second spec of the same checker (another command, a flag)
that failed them judges with the first one's standing.

Found (xfail until fixed): both; in the second, ``doc`` is bad, the lenient spec (which got a
fixture wrong at publish) says verified, and the run is ``Verified``.

Refused correctly (passing): a checker reference the contract does not list under conformance
cannot make work verified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.status import Status
from tests.adversarial.platform_attacks import FINDING, Clock, artifact, make_problem, opened, store

CHECKER = """import json, sys
from pathlib import Path
files = sorted(p for p in Path("/input/artifacts/doc").rglob("*") if p.is_file())
text = files[0].read_text().strip() if files else ""
ok = "--lenient" in sys.argv or text == "good"
Path("/output/result.json").write_text(
    json.dumps({"result": "verified" if ok else "refuted", "summary": "judged"})
)
"""
FILES = {
    "checker/check.py": CHECKER,
    "fixtures/good/expected.json": '{"result": "verified"}',
    "fixtures/good/artifacts/doc/doc": "good",
    "fixtures/bad/expected.json": '{"result": "refuted"}',
    "fixtures/bad/artifacts/doc/doc": "bad",
}
STRICT = {"kind": "program", "checker": "checker", "artifacts": {"doc": "doc2"}, "timeout": 30}
LENIENT = {
    "kind": "program",
    "checker": "checker",
    "command": ["python3", "/checker/check.py", "--lenient"],
    "artifacts": {"doc": "doc"},
    "timeout": 30,
}
ROLES = [{"name": "doc", "max_bytes": 100}, {"name": "doc2", "max_bytes": 100}]


def _contract(checks: list[dict[str, Any]], conformance: bool = True) -> dict[str, Any]:
    contract: dict[str, Any] = {
        "roles": ROLES,
        "references": [{"key": "checker", "path": "checker/"}],
        "acceptance": "doc and doc2 are both good, by the author's checker",
        "stages": [{"name": "s", "type": "sandbox", "checks": checks}],
    }
    if conformance:
        contract["conformance"] = {"checker": "fixtures/"}
    return contract


def _submit(tmp_path: Path, contract: dict[str, Any]) -> Any:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=contract, files=FILES), "mgr")
        given = {
            "doc": artifact(tmp_path, "doc", "bad"),
            "doc2": artifact(tmp_path, "doc2", "good"),
        }
        return platform.submit("demo", given, None, "alice")


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    raises=FINDING,
    reason="a program check with only a command is 'assay:program@VERSION': the conformance "
    "gate never applies to it",
)
def test_a_program_check_without_a_checker_reference_cannot_verify(tmp_path: Path) -> None:
    inline = {
        "kind": "program",
        "command": [
            "python3",
            "-c",
            "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'verified'}))",
        ],
        "artifacts": {"doc": "doc"},
        "timeout": 30,
    }
    run = _submit(tmp_path, _contract([inline], conformance=False))
    assert run.status is not Status.VERIFIED, run.stages[0].checkers


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    raises=FINDING,
    reason="conformance is keyed by the checker's bytes, not by the check spec: a spec that "
    "failed its fixtures judges because another spec of the same checker passed them",
)
def test_a_check_spec_that_failed_its_fixtures_cannot_verify(tmp_path: Path) -> None:
    run = _submit(tmp_path, _contract([STRICT, LENIENT]))
    assert run.status is not Status.VERIFIED, [c["detail"] for c in run.stages[0].checks]


@pytest.mark.slow
def test_a_checker_not_listed_under_conformance_cannot_verify(tmp_path: Path) -> None:
    good = {"kind": "program", "checker": "checker", "artifacts": {"doc": "doc2"}, "timeout": 30}
    run = _submit(tmp_path, _contract([good], conformance=False))
    assert run.status is Status.INCONCLUSIVE
    assert "conformance" in run.stages[0].checks[0]["detail"]
