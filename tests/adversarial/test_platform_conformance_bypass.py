"""A ``program`` checker that never reproduced its conformance fixtures makes work verified.

Found here and fixed by the lead while this was written (kept as passing regression tests):
- a program check naming no ``checker`` (only a ``command``) got the id
  ``assay:program@VERSION``, which the conformance gate never asked about: it verified with no
  conformance at all (now refused at publish);
- conformance was keyed by the checker's bytes, so a second spec of the same checker (another
  command, a ``--lenient`` flag) that failed the fixtures judged with the first spec's standing:
  ``doc`` bad, the lenient spec said verified, the run was ``Verified``.

Refused correctly (passing): a checker reference the contract does not list under conformance
cannot make work verified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.status import Status
from tests.adversarial.platform_attacks import Clock, artifact, make_problem, opened, store

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
    with pytest.raises(InvalidInput, match="checker"):  # refused at publish
        _submit(tmp_path, _contract([inline], conformance=False))


@pytest.mark.slow
def test_a_check_spec_that_failed_its_fixtures_cannot_verify(tmp_path: Path) -> None:
    run = _submit(tmp_path, _contract([STRICT, LENIENT]))
    assert run.status is not Status.VERIFIED, [c["detail"] for c in run.stages[0].checks]


@pytest.mark.slow
def test_a_checker_not_listed_under_conformance_cannot_verify(tmp_path: Path) -> None:
    good = {"kind": "program", "checker": "checker", "artifacts": {"doc": "doc2"}, "timeout": 30}
    run = _submit(tmp_path, _contract([good], conformance=False))
    assert run.status is Status.INCONCLUSIVE
    assert "conformance" in run.stages[0].checks[0]["detail"]
