"""A rule stage's ``binds`` tie the supplied evidence to the submission it concludes.

Without a bind the rule judges the evidence alone: the right report about one entry, supplied
for another, verified the other (found by adversarial review). Each bind names a place in the
evidence and either a place in a JSON artifact or the artifact's sha256. Evidence about other
work (the place missing, or another value, types included: ``1`` is not ``1.0``, ``true`` is
not ``1``) is refused with nothing recorded, so the right report can still conclude the run;
what the submission lacks for a bind refutes; a withdrawn bound artifact leaves the stage
inconclusive. A contract without binds keeps its JSON, and so its id."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import FolderInvalid, Platform
from assay.platform._contract import Contract
from assay.platform._external import MISSING, member
from assay.status import Status
from tests.platform.conftest import make_problem, rule_contract

SCHEMA = {"type": "object", "required": ["image"]}
ENTRY: dict[str, Any] = {
    "image": "reg/team/server@sha256:" + "a" * 64,
    "batch": 32,
    "tags": ["x", "y"],
}


def _bound(platform: Platform, tmp_path: Path, binds: list[dict[str, Any]]) -> str:
    name = f"bound-{hashlib.sha256(json.dumps(binds).encode()).hexdigest()[:8]}"
    folder = make_problem(
        tmp_path / "problems",
        problem=name,
        contract=rule_contract(binds, schema=SCHEMA, notes=True),
    )
    platform.publish(folder, "alice")
    return name


def _file(tmp_path: Path, content: bytes, name: str = "entry.json") -> Path:
    path = tmp_path / "work" / hashlib.sha256(content).hexdigest()[:12] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def _record(
    platform: Platform, problem: str, artifacts: dict[str, Path], evidence: dict[str, Any]
) -> tuple[Status | None, str]:
    run = platform.submit(problem, artifacts, None, "bob")
    done = platform.record_external(
        run.submission, "bench", "operator", evidence=json.dumps(evidence).encode()
    )
    return done.status, done.stages[-1].detail


AT_IMAGE = [{"evidence": "/image", "role": "entry", "at": "/image"}]


def test_a_report_about_this_entry_verifies(platform: Platform, tmp_path: Path) -> None:
    problem = _bound(platform, tmp_path, AT_IMAGE)
    entry = _file(tmp_path, json.dumps(ENTRY).encode())
    status, detail = _record(platform, problem, {"entry": entry}, {"image": ENTRY["image"]})
    assert status is Status.VERIFIED, detail
    assert "about this submission" in detail


@pytest.mark.parametrize(
    ("binds", "evidence", "named"),
    [
        (AT_IMAGE, {"image": "reg/rival/slow@sha256:" + "0" * 64}, "about other work"),
        (AT_IMAGE, {"image": ENTRY["image"] + " "}, "about other work"),
        ([{"evidence": "/n", "role": "entry", "at": "/batch"}], {"image": "i", "n": 32.0}, "32.0"),
        ([{"evidence": "/n", "role": "entry", "at": "/batch"}], {"image": "i", "n": "32"}, '"32"'),
        ([{"evidence": "/t", "role": "entry", "at": "/tags/1"}], {"image": "i", "t": "x"}, '"x"'),
        (
            [{"evidence": "/t", "role": "entry", "at": "/tags"}],
            {"image": "i", "t": ["y", "x"]},
            "[",
        ),
        (AT_IMAGE, {"image": None}, "null"),
        (
            [{"evidence": "/missing", "role": "entry", "at": "/image"}],
            {"image": "i"},
            "no /missing",
        ),
    ],
)
def test_evidence_about_other_work_is_refused_and_the_run_keeps_waiting(
    platform: Platform,
    tmp_path: Path,
    binds: list[dict[str, Any]],
    evidence: dict[str, Any],
    named: str,
) -> None:
    problem = _bound(platform, tmp_path, binds)
    entry = _file(tmp_path, json.dumps(ENTRY).encode())
    run = platform.submit(problem, {"entry": entry}, None, "bob")
    before = len(platform.ledger.find(subject=run.submission))
    with pytest.raises(InvalidInput) as refused:
        platform.record_external(
            run.submission, "bench", "operator", evidence=json.dumps(evidence).encode()
        )
    assert named in str(refused.value) and refused.value.where == "--evidence", refused.value
    assert json.dumps(ENTRY["image"]) not in str(refused.value)  # the entry's is never quoted
    assert len(platform.ledger.find(subject=run.submission)) == before  # nothing recorded
    right = {"image": ENTRY["image"], "n": 32, "t": "y", "missing": ENTRY["image"]}
    if binds[0]["at"] == "/tags":
        right["t"] = ["x", "y"]
    done = platform.record_external(
        run.submission, "bench", "operator", evidence=json.dumps(right).encode()
    )
    assert done.status is Status.VERIFIED, done.stages[-1].detail  # the slip cost nothing


@pytest.mark.parametrize(
    ("binds", "named"),
    [
        ([{"evidence": "/image", "role": "entry", "at": "/nope"}], "has no /nope"),
        ([{"evidence": "/image", "role": "notes", "at": "/x"}], "no notes"),
    ],
)
def test_what_the_submission_lacks_for_a_bind_refutes(
    platform: Platform, tmp_path: Path, binds: list[dict[str, Any]], named: str
) -> None:
    problem = _bound(platform, tmp_path, binds)
    entry = _file(tmp_path, json.dumps(ENTRY).encode())
    status, detail = _record(platform, problem, {"entry": entry}, {"image": "i"})
    assert status is Status.REFUTED, detail
    assert named in detail, detail


def test_a_bind_by_sha256_holds_only_for_these_bytes(platform: Platform, tmp_path: Path) -> None:
    problem = _bound(platform, tmp_path, [{"evidence": "/subject", "role": "entry"}])
    content = b"any bytes at all\n"
    entry = _file(tmp_path, content, "entry.bin")
    digest = hashlib.sha256(content).hexdigest()
    status, detail = _record(platform, problem, {"entry": entry}, {"image": "i", "subject": digest})
    assert status is Status.VERIFIED, detail
    upper = {"image": "i", "subject": digest.upper()}  # the same digest, written in capitals
    assert _record(platform, problem, {"entry": entry}, upper)[0] is Status.VERIFIED
    other = hashlib.sha256(b"other bytes\n").hexdigest()
    with pytest.raises(InvalidInput, match="sha256"):
        _record(platform, problem, {"entry": entry}, {"image": "i", "subject": other})


@pytest.mark.parametrize(
    ("content", "named"),
    [(b"not json {", "not strict JSON"), (b'{"image": NaN}', "not strict JSON")],
)
def test_an_artifact_that_is_not_json_refutes_a_bind_into_it(
    platform: Platform, tmp_path: Path, content: bytes, named: str
) -> None:
    problem = _bound(platform, tmp_path, AT_IMAGE)
    entry = _file(tmp_path, content)
    status, detail = _record(platform, problem, {"entry": entry}, {"image": "i"})
    assert status is Status.REFUTED and named in detail, detail


def test_a_folder_artifact_refutes_a_bind_into_it(platform: Platform, tmp_path: Path) -> None:
    problem = _bound(platform, tmp_path, AT_IMAGE)
    folder = tmp_path / "work" / "folder"
    folder.mkdir(parents=True)
    (folder / "image").write_text("i")
    status, detail = _record(platform, problem, {"entry": folder}, {"image": "i"})
    assert status is Status.REFUTED and "folder" in detail, detail


def test_withdrawn_bytes_leave_the_bind_unchecked(platform: Platform, tmp_path: Path) -> None:
    problem = _bound(platform, tmp_path, AT_IMAGE)
    entry = _file(tmp_path, json.dumps(ENTRY).encode())
    run = platform.submit(problem, {"entry": entry}, None, "bob")
    platform.withdraw(run.submission, "entry", "bob")
    done = platform.record_external(
        run.submission, "bench", "operator", evidence=json.dumps({"image": "x"}).encode()
    )
    assert done.status is Status.INCONCLUSIVE and "withdrawn" in done.stages[-1].detail


def test_a_withdrawn_artifact_is_unchecked_even_when_its_bytes_are_kept_for_another(
    platform: Platform, tmp_path: Path
) -> None:
    """The withdrawal record decides, not whether the bytes happen to be stored for someone
    else's submission with the same content."""
    problem = _bound(platform, tmp_path, AT_IMAGE)
    entry = _file(tmp_path, json.dumps(ENTRY).encode())
    platform.submit(problem, {"entry": entry}, None, "carol")  # the same bytes, kept
    run = platform.submit(problem, {"entry": entry}, None, "bob")
    platform.withdraw(run.submission, "entry", "bob")
    done = platform.record_external(
        run.submission, "bench", "operator", evidence=json.dumps({"image": "x"}).encode()
    )
    assert done.status is Status.INCONCLUSIVE and "withdrawn" in done.stages[-1].detail


@pytest.mark.parametrize(
    ("stage", "named"),
    [
        ({"binds": [{"evidence": "/image", "role": "nobody", "at": "/image"}]}, "not a role"),
        ({"binds": [{"evidence": "image", "role": "entry"}]}, "JSON Pointer"),
        ({"binds": [{"evidence": "", "role": "entry"}]}, "JSON Pointer"),
        ({"binds": [{"evidence": "/a~2", "role": "entry"}]}, "JSON Pointer"),
        ({"binds": [{"evidence": "/image", "role": "entry", "at": "x"}]}, "JSON Pointer"),
        ({"binds": [{"evidence": "/image", "role": "entry", "where": "/x"}]}, "where"),
    ],
)
def test_a_bad_bind_is_refused_at_publish(
    platform: Platform, tmp_path: Path, stage: dict[str, Any], named: str
) -> None:
    contract = rule_contract([], schema=SCHEMA, notes=True)
    contract["stages"][0].update(stage)
    folder = make_problem(tmp_path, problem="bad-bind", contract=contract)
    with pytest.raises((InvalidInput, FolderInvalid)) as refused:
        platform.publish(folder, "alice")
    assert named in str(refused.value), refused.value


def test_a_party_stage_has_no_binds() -> None:
    stage: dict[str, Any] = {"name": "p", "type": "external", "mechanism": "party", "party": "lab"}
    stage["binds"] = [{"evidence": "/a", "role": "entry"}]
    with pytest.raises(ValueError, match="'binds' is for a 'rule' stage"):
        Contract.model_validate(
            {"acceptance": "a", "roles": [{"name": "entry"}], "stages": [stage]}
        )


def test_a_contract_without_binds_keeps_its_json_and_id() -> None:
    plain = rule_contract(None, schema=SCHEMA, notes=True)
    without = Contract.model_validate(plain)
    empty = Contract.model_validate(rule_contract([], schema=SCHEMA, notes=True))
    assert "binds" not in json.dumps(without.to_json())
    assert empty.id == without.id
    bound = Contract.model_validate(rule_contract(AT_IMAGE, schema=SCHEMA, notes=True))
    assert bound.id != without.id


@pytest.mark.parametrize(
    ("document", "pointer", "value"),
    [
        ({"a/b": 1}, "/a~1b", 1),
        ({"m~n": 2}, "/m~0n", 2),
        ({"l": [5, 6]}, "/l/1", 6),
        ({"l": [5, 6]}, "/l/01", None),
        ({"l": [5, 6]}, "/l/2", None),
        ({"l": [5, 6]}, "/l/-1", None),
        ({"l": [5, 6]}, "/l/\u00b9", None),  # a superscript one is no index
        ({"l": [5, 6]}, "/l/\u0661", None),  # nor an Arabic-Indic one
        ({"": {"": 3}}, "//", 3),
        ({"a": None}, "/a", "null"),
    ],
)
def test_a_pointer_reads_as_rfc_6901_says(
    document: dict[str, Any], pointer: str, value: object
) -> None:
    found = member(document, pointer)
    if value is None:
        assert found is MISSING
    elif value == "null":
        assert found is None
    else:
        assert found == value
