"""A `program` checker judges only after it reproduced its fixtures, recorded by its digest.

A non-conforming checker is ``error`` (it may not judge), whatever it would have said about the
submission; a changed checker (its files, its command, its fixtures, its limits) must conform
again; a forged conformance entry is not believed; and a checker that recognises its published
fixtures by their hashes is caught by fixtures held back from it, both when it conforms and by
the spot check after each judgment.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, Status, build_check
from assay._signed import MAGIC, SignedStore
from assay.sandbox import Conformance, Limits, Sandbox
from assay.sandbox._conform import checker_digest, load_fixtures

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR
SAT = Path(__file__).resolve().parents[2] / "examples" / "checkers" / "sat"
SATISFYING, FALSIFYING = "1 2 -3 0\n", "-1 -2 -3 0\n"
DEFAULT_LIMITS = Limits(timeout=30.0, memory_mb=1024)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # this test's own key
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "assignment.txt").write_text(SATISFYING)
    shutil.copy(SAT / "check.py", tmp_path / "check.py")
    shutil.copy(SAT / "instance.cnf", tmp_path / "instance.cnf")
    shutil.copytree(SAT / "fixtures", tmp_path / "fixtures")
    return tmp_path


def run(sandbox: Sandbox, root: Path, answer: str = SATISFYING, **spec: Any) -> Any:
    (root / "ws" / "assignment.txt").write_text(answer)
    full = {
        "kind": "program",
        "checker": "check.py",
        "fixtures": "fixtures",
        "artifacts": {"assignment": "assignment.txt"},
        "references": {"instance": "instance.cnf"},
        **spec,
    }
    ctx = CheckContext(
        workspace=root / "ws",
        base_dir=root,
        sandbox=sandbox,
        config=Config(judgment_cache=str(root / "cache")),
    )
    return build_check(full).run(ctx)


def store(root: Path) -> SignedStore:
    return SignedStore(root / "cache" / "conformance", "conformance")


NON_CONFORMING = {
    "always_verified": "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'verified'}))",
    "always_refuted": "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'refuted'}))",
    "crashes": "raise SystemExit(3)",
    "says_inconclusive": "import json; open('/output/result.json', 'w').write(json.dumps({'result': 'inconclusive'}))",
}


@pytest.mark.parametrize("name", sorted(NON_CONFORMING))
def test_a_non_conforming_checker_may_not_judge(sandbox: Sandbox, task: Path, name: str) -> None:
    (task / "check.py").write_text(NON_CONFORMING[name])
    outcome = run(sandbox, task)
    assert outcome.status is E, outcome.detail
    assert "has not reproduced its conformance fixtures" in outcome.detail
    assert " of 6 fixtures reproduced" in outcome.detail
    assert "says nothing about the submission" in outcome.detail
    assert len(outcome.evidence["conformance"]["checker_digest"]) == 64
    assert list((task / "cache" / "conformance").rglob("*.json")) == []  # a failure is not stored


def test_a_conforming_checker_judges_and_its_conformance_is_remembered(
    sandbox: Sandbox, task: Path
) -> None:
    first = run(sandbox, task)
    assert first.status is V, first.detail
    assert first.evidence["conformance"]["fixtures"] == "6/6"
    assert first.evidence["conformance"]["cached"] is False
    wrong = run(sandbox, task, FALSIFYING)
    assert wrong.status is R
    assert wrong.evidence["conformance"]["cached"] is True
    same = wrong.evidence["conformance"]["checker_digest"]
    assert same == first.evidence["conformance"]["checker_digest"]


CHANGES = {
    "checker_bytes": lambda root: (root / "check.py").write_text(
        (root / "check.py").read_text() + "\n# a harmless comment\n"
    ),
    "fixture_added": lambda root: shutil.copytree(
        root / "fixtures" / "satisfying", root / "fixtures" / "satisfying_again"
    ),
    "expected_changed": lambda root: (
        root / "fixtures" / "unreadable_instance" / "expected.json"
    ).write_text(json.dumps({"result": "inconclusive", "note": "same result, new bytes"})),
}


@pytest.mark.slow
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_checker_must_conform_again(sandbox: Sandbox, task: Path, change: str) -> None:
    before = run(sandbox, task)
    assert before.evidence["conformance"]["cached"] is False
    assert run(sandbox, task).evidence["conformance"]["cached"] is True
    CHANGES[change](task)
    after = run(sandbox, task)
    assert after.status is V, after.detail
    assert after.evidence["conformance"]["cached"] is False
    assert (
        after.evidence["conformance"]["checker_digest"]
        != before.evidence["conformance"]["checker_digest"]
    )


def test_other_limits_or_command_are_another_digest(sandbox: Sandbox, task: Path) -> None:
    base = run(sandbox, task).evidence["conformance"]["checker_digest"]
    slower = run(sandbox, task, timeout=31).evidence["conformance"]
    command = run(sandbox, task, command=["python3", "-S", "/checker/check.py"])
    assert slower["cached"] is False and slower["checker_digest"] != base
    assert command.evidence["conformance"]["checker_digest"] not in (base, slower["checker_digest"])


def test_a_checker_turned_liar_is_caught_once_its_digest_changes(
    sandbox: Sandbox, task: Path
) -> None:
    assert run(sandbox, task).status is V
    (task / "check.py").write_text(NON_CONFORMING["always_verified"])
    outcome = run(sandbox, task, FALSIFYING)
    assert outcome.status is E, outcome.detail


@pytest.mark.parametrize("forgery", ["unsigned", "other_namespace", "bad_signature"])
def test_a_forged_conformance_entry_is_not_believed(
    sandbox: Sandbox, task: Path, forgery: str
) -> None:
    (task / "check.py").write_text(NON_CONFORMING["always_verified"])
    refused = run(sandbox, task, FALSIFYING)
    assert refused.status is E
    digest = refused.evidence["conformance"]["checker_digest"]
    claim = json.dumps({"digest": digest, "passed": True, "results": [], "held_back": []})
    path = store(task).path(digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    if forgery == "unsigned":
        path.write_text(claim)
    elif forgery == "other_namespace":
        SignedStore(task / "cache" / "conformance", "judgment").put(digest, json.loads(claim))
    else:
        path.write_bytes(MAGIC + b"0" * 64 + b"\n" + claim.encode())
    again = run(sandbox, task, FALSIFYING)
    assert again.status is E, again.detail
    assert again.evidence["conformance"]["cached"] is False


def held_back(root: Path, assignments: dict[str, tuple[str, str]]) -> Path:
    """Fixtures against the task's own instance (no reference/): they look like submissions."""
    folder = root / "held_back"
    for name, (text, expected) in assignments.items():
        (folder / name / "artifacts" / "assignment").mkdir(parents=True)
        (folder / name / "artifacts" / "assignment" / "assignment.txt").write_text(text)
        (folder / name / "expected.json").write_text(json.dumps({"result": expected}))
    return folder


def memorising_checker(root: Path) -> None:
    """Answers the published fixtures by their files' hashes, and 'verified' to anything else."""
    known = {}
    for fixture in sorted((root / "fixtures").iterdir()):
        files = [p for p in sorted(fixture.rglob("*")) if p.is_file() and p.name != "expected.json"]
        ident = ",".join(sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in files))
        known[ident] = json.loads((fixture / "expected.json").read_text())["result"]
    (root / "check.py").write_text(
        textwrap.dedent(
            f"""
            import json
            manifest = json.load(open("/input/manifest.json"))
            hashes = [f["sha256"] for section in ("artifacts", "references")
                      for files in manifest[section].values() for f in files]
            result = {known!r}.get(",".join(sorted(hashes)), "verified")
            open("/output/result.json", "w").write(json.dumps({{"result": result}}))
            """
        )
    )


HELD_BACK = {"zeros": (FALSIFYING, "refuted"), "no_final_zero": ("1 2 -3\n", "verified")}


def test_published_fixtures_alone_cannot_catch_a_memorising_checker(
    sandbox: Sandbox, task: Path
) -> None:
    """The documented limit: a checker can recognise fixtures by the manifest's hashes."""
    memorising_checker(task)
    outcome = run(sandbox, task, FALSIFYING)
    assert outcome.status is V  # wrong work verified: this is what held-back fixtures are for


def test_held_back_fixtures_catch_a_memorising_checker(sandbox: Sandbox, task: Path) -> None:
    memorising_checker(task)
    held_back(task, HELD_BACK)
    outcome = run(sandbox, task, FALSIFYING, held_back_fixtures="held_back")
    assert outcome.status is E, outcome.detail
    assert "7 of 8 fixtures reproduced (1 held-back fixture disagreed)" in outcome.detail
    assert "zeros" not in outcome.detail  # held-back fixtures are counted, never named


def test_the_spot_check_catches_a_checker_that_conformed_earlier(
    sandbox: Sandbox, task: Path
) -> None:
    """A checker that passed (here: an entry as an earlier run would have left), then lies."""
    memorising_checker(task)
    held = held_back(task, {"zeros": HELD_BACK["zeros"]})
    digest = checker_digest(
        task / "check.py",
        ["python3", "/checker/check.py"],
        load_fixtures(task / "fixtures").digest,
        load_fixtures(held).digest,
        DEFAULT_LIMITS,
        references={"instance": task / "instance.cnf"},
        roles=["assignment"],
    )
    store(task).put(digest, Conformance(digest=digest, results=[]).to_json())
    outcome = run(sandbox, task, FALSIFYING, held_back_fixtures="held_back")
    assert outcome.status is E, outcome.detail
    assert "disagreed with one of its held-back fixtures" in outcome.detail
    assert "zeros" not in outcome.detail
    assert outcome.evidence["conformance"]["cached"] is True
    assert store(task).get(digest) is None  # it must conform again
    again = run(sandbox, task, FALSIFYING, held_back_fixtures="held_back")
    assert again.status is E and "has not reproduced" in again.detail


def test_an_honest_checker_passes_its_held_back_fixtures(sandbox: Sandbox, task: Path) -> None:
    held_back(task, HELD_BACK)
    good = run(sandbox, task, held_back_fixtures="held_back")
    assert good.status is V, good.detail
    conformance = good.evidence["conformance"]
    assert (conformance["fixtures"], conformance["held_back"]) == ("6/6", "2/2")
    assert conformance["spot_check"] == {"held_back_fixtures_run": 1, "agreed": True}
    assert run(sandbox, task, FALSIFYING, held_back_fixtures="held_back").status is R


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"fixtures": "nowhere"}, "fixtures folder 'nowhere' does not exist"),
        ({"held_back_fixtures": "nowhere"}, "held_back_fixtures folder 'nowhere' does not exist"),
        (
            {"checker": ".", "command": ["python3", "/checker/check.py"]},
            "checker ('.') contains the agent's workspace",
        ),
        ({"artifacts": {"assigment": "assignment.txt"}}, "artifacts/assignment is not declared"),
        ({"references": {"cnf": "instance.cnf"}}, "reference/instance is not declared"),
    ],
)
def test_unusable_fixtures_are_an_error(
    sandbox: Sandbox, task: Path, spec: dict[str, Any], message: str
) -> None:
    outcome = run(sandbox, task, **spec)
    assert outcome.status is E
    assert message in outcome.detail
