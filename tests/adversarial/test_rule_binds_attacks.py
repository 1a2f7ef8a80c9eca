"""A rule stage's ``binds`` attacked: evidence about other work made to conclude this one, a
refutation turned into ``inconclusive`` or an error, a supplier's slip made permanent (helper
"adv-binds").

A bind says the value at a JSON Pointer in the evidence is the submission's artifact's value at
a pointer (the artifact read as strict JSON) or, without ``at``, the artifact's sha256. The
attacks: two readings of one JSON text (duplicate keys, escapes, a BOM, trailing bytes, numbers
beyond the float range), two spellings of one value and two values that print alike (escapes,
Unicode forms, big integers, ``true`` and ``1``), RFC 6901 corner cases (``~01``, ``-``, leading
zeros, the empty key, digits that are not ASCII), roles omitted, folders, withdrawn bytes, a
bind naming a sealed reference, a re-check after a refutation and a revision without binds.

What holds is a passing test; each finding is ``xfail(strict=True)`` asserting the right
status, so it fails loudly once fixed (then drop the mark)."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assay import Config
from assay._errors import InvalidInput
from assay.checks._kinds._json_schema import SCHEMA_DEPTH_LIMIT
from assay.ledger import Ledger
from assay.platform import FolderInvalid, Platform, RunView
from assay.platform._contract import Contract
from assay.status import Status
from tests.platform.conftest import Clock, make_problem, rule_contract

SEALED = "SEALED-REFERENCE-BYTES-3b9f"
"""The sealed reference's text: no stage detail may ever hold it."""

AT_IMAGE = [{"evidence": "/image", "role": "entry", "at": "/image"}]
BY_SHA = [{"evidence": "/digest", "role": "entry"}]


@dataclass
class Bench:
    """One platform (SQLite) for the module, publishing each distinct contract once."""

    platform: Platform
    root: Path
    published: dict[str, str] = field(default_factory=dict)
    files: Iterator[int] = field(default_factory=itertools.count)

    def problem(
        self,
        binds: list[dict[str, Any]],
        schema: dict[str, Any] | None = None,
        **extra: Any,
    ) -> str:
        """A problem whose only stage is rule stage ``bench`` (supplier ``operator``) over a
        required ``entry`` and an optional ``notes``."""
        contract = rule_contract(binds, schema=schema, notes=True)
        key = json.dumps([contract, extra], sort_keys=True)
        if key not in self.published:
            name = f"binds-{len(self.published)}"
            folder = make_problem(self.root / "problems", problem=name, contract=contract, **extra)
            self.platform.publish(folder, "alice")
            self.published[key] = name
        return self.published[key]

    def file(self, content: bytes, name: str = "entry.json") -> Path:
        path = self.root / "work" / str(next(self.files)) / name
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
        return path

    def submit(self, problem: str, **artifacts: bytes | Path) -> RunView:
        paths = {
            role: value if isinstance(value, Path) else self.file(value)
            for role, value in artifacts.items()
        }
        return self.platform.submit(problem, paths, None, "bob")

    def record(self, submission: str, evidence: bytes) -> tuple[Status | None, str]:
        done = self.platform.record_external(submission, "bench", "operator", evidence=evidence)
        return done.status, done.stages[-1].detail

    def standing(self, submission: str) -> Status | None:
        return self.platform.show(submission, "bob").verdict.standing


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    root = tmp_path_factory.mktemp("binds")
    config = Config(db=f"sqlite:///{root / 'assay.db'}", blobs=str(root / "blobs"))
    with Platform(Ledger.open(config), config, clock=Clock()) as platform:
        yield Bench(platform, root)


def _conclude(
    bench: Bench, binds: list[dict[str, Any]], artifact: bytes, evidence: bytes
) -> tuple[Status | None, str]:
    run = bench.submit(bench.problem(binds), entry=artifact)
    return bench.record(run.submission, evidence)


REFUSED = "refused"
"""Evidence about other work is refused at the door (InvalidInput): nothing recorded."""


def _outcome(bench: Bench, submission: str, evidence: bytes) -> tuple[Status | str | None, str]:
    """The recorded status, or ``REFUSED`` with the refusal's message."""
    try:
        return bench.record(submission, evidence)
    except InvalidInput as exc:
        return REFUSED, str(exc)


# ------------------------------------------------------------------ two spellings, one value

E = [{"evidence": "/e", "role": "entry", "at": "/v"}]


@pytest.mark.parametrize(
    ("artifact", "evidence"),
    [
        pytest.param(b'{"\\u0076": "X"}', b'{"e": "X"}', id="escaped-key"),
        pytest.param(b'{"v": "reg\\/team"}', b'{"e": "reg\\u002fteam"}', id="escaped-slash"),
        pytest.param(b'{"v": "\\u00e9"}', '{"e": "\u00e9"}'.encode(), id="escaped-e-acute"),
        pytest.param(b'{"v": "\\ud83d\\ude00"}', '{"e": "\U0001f600"}'.encode(), id="pair"),
        pytest.param(b'{"v": 1e2}', b'{"e": 100.0}', id="exponent"),
        pytest.param(b'{"v": %d}' % 10**1000, b'{"e": %d}' % 10**1000, id="int-1001-digits"),
        pytest.param(b'\n\t {"v": "X"} \r\n', b'{"e": "X"}', id="whitespace-around"),
        pytest.param(b'{"v": {"a": 1, "b": [2]}}', b'{"e": {"b": [2], "a": 1}}', id="key-order"),
        pytest.param(  # as deep as a schema-checked document may nest (the object adds one)
            b'{"v": %s}' % (b"[" * (SCHEMA_DEPTH_LIMIT - 1) + b"]" * (SCHEMA_DEPTH_LIMIT - 1)),
            b'{"e": %s}' % (b"[" * (SCHEMA_DEPTH_LIMIT - 1) + b"]" * (SCHEMA_DEPTH_LIMIT - 1)),
            id="deep",
        ),
    ],
)
def test_two_spellings_of_one_json_value_hold(
    bench: Bench, artifact: bytes, evidence: bytes
) -> None:
    status, detail = _conclude(bench, E, artifact, evidence)
    assert status is Status.VERIFIED, detail


@pytest.mark.parametrize(
    ("artifact", "evidence"),
    [
        pytest.param('{"v": "caf\u00e9"}'.encode(), '{"e": "cafe\u0301"}'.encode(), id="nfc-nfd"),
        pytest.param(b'{"v": "\\ud800"}', b'{"e": "\\ufffd"}', id="lone-surrogate"),
        pytest.param(b'{"v": %d}' % 10**1000, b'{"e": %d}' % (10**1000 + 1), id="big-int+1"),
        pytest.param(b'{"v": 100000000000000000000}', b'{"e": 1e20}', id="int-vs-float"),
        pytest.param(b'{"v": 1}', b'{"e": true}', id="one-vs-true"),
        pytest.param(b'{"v": 0}', b'{"e": false}', id="zero-vs-false"),
        pytest.param(b'{"v": null}', b'{"e": "null"}', id="null-vs-text"),
        pytest.param(b'{"v": "X"}', b'{"e": ["X"]}', id="wrapped"),
        pytest.param(b'{"v": {"a": 1}}', b'{"e": {"a": 1, "b": null}}', id="extra-member"),
        pytest.param(b'{"v": "X"}', b'{"e": "X\\u0000"}', id="trailing-nul"),
        pytest.param(b'{"v": "reg"}', b'{"e": "Reg"}', id="case"),
    ],
)
def test_two_values_that_look_alike_do_not_hold(
    bench: Bench, artifact: bytes, evidence: bytes
) -> None:
    run = bench.submit(bench.problem(E), entry=artifact)
    status, detail = _outcome(bench, run.submission, evidence)
    assert status == REFUSED and "about other work" in detail, detail


# ------------------------------------------------------------------ two readings of one text


@pytest.mark.parametrize(
    ("artifact", "claimed"),
    [
        pytest.param(b'\xef\xbb\xbf{"image": "X"}', "X", id="bom"),
        pytest.param(b'{"image": "X"} trailing', "X", id="trailing-garbage"),
        pytest.param(b'{"image": "X"}{"image": "Y"}', "X", id="two-documents"),
        pytest.param(b'{"image": "X", "image": "Y"}', "X", id="duplicate-first"),
        pytest.param(b'{"image": "X", "image": "Y"}', "Y", id="duplicate-last"),
        pytest.param(b'{"image": "X", "im\\u0061ge": "Y"}', "Y", id="duplicate-escaped"),
        pytest.param(b'{"image": "X", "n": 1e400}', "X", id="beyond-float"),
        pytest.param(b'{"image": "X", "n": NaN}', "X", id="nan"),
        pytest.param(b'{"image": "X", "n": %s}' % (b"9" * 5000), "X", id="int-5000-digits"),
        pytest.param('{"image": "X\u00e9"}'.encode("latin-1"), "X\u00e9", id="latin-1"),
        pytest.param('{"image": "X"}'.encode("utf-16"), "X", id="utf-16"),
        pytest.param(b'{"image": "X", "d": %s}' % (b"[" * 5000 + b"]" * 5000), "X", id="deep"),
        pytest.param(b"", "X", id="empty"),
        pytest.param(b'{"image": "X" /* c */}', "X", id="comment"),
        pytest.param(b"{'image': 'X'}", "X", id="single-quotes"),
    ],
)
def test_an_artifact_that_is_not_strict_json_refutes_a_bind_into_it(
    bench: Bench, artifact: bytes, claimed: str
) -> None:
    """Whichever reading a lenient reader takes (the first duplicate, the last, the text
    before the garbage), the evidence naming it does not conclude the entry."""
    evidence = json.dumps({"image": claimed}).encode()
    status, detail = _conclude(bench, AT_IMAGE, artifact, evidence)
    assert status is Status.REFUTED and "not strict JSON" in detail, detail


@pytest.mark.parametrize(
    "evidence",
    [
        pytest.param(b'\xef\xbb\xbf{"image": "X"}', id="bom"),
        pytest.param(b'{"image": "Y", "image": "X"}', id="duplicate"),
        pytest.param(b'{"image": "Y", "im\\u0061ge": "X"}', id="duplicate-escaped"),
        pytest.param(b'{"image": "X"} {"image": "Y"}', id="two-documents"),
        pytest.param(b'{"image": "X", "n": 1e400}', id="beyond-float"),
        pytest.param(b'{"image": "X", "n": Infinity}', id="infinity"),
        pytest.param(b'{"image": "X", "n": 1e-400}', id="underflow"),
        pytest.param(b'{"image": "X", "n": %s}' % (b"9" * 5000), id="int-5000-digits"),
        pytest.param('{"image": "X"}'.encode("utf-16"), id="utf-16"),
        pytest.param(b'{"image": "X", "d": %s}' % (b"[" * 5000 + b"]" * 5000), id="deep"),
    ],
)
def test_evidence_that_is_not_strict_json_concludes_nothing(bench: Bench, evidence: bytes) -> None:
    """Refused at the door (nothing recorded, the run keeps waiting): the right report then
    still concludes."""
    run = bench.submit(bench.problem(AT_IMAGE), entry=b'{"image": "X"}')
    with pytest.raises(InvalidInput, match="not strict JSON"):
        bench.record(run.submission, evidence)
    status, detail = bench.record(run.submission, b'{"image": "X"}')
    assert status is Status.VERIFIED, detail


# ------------------------------------------------------------------ JSON Pointer corners

ODD = {"~1": "tilde-one", "/": "slash", "~": "tilde", "": "empty", "a/b": "slashed"}


@pytest.mark.parametrize(
    ("document", "at", "said", "status"),
    [
        pytest.param(ODD, "/~01", "tilde-one", Status.VERIFIED, id="~01-is-key-~1"),
        pytest.param(ODD, "/~01", "slash", REFUSED, id="~01-is-not-/"),
        pytest.param(ODD, "/~1", "slash", Status.VERIFIED, id="~1-is-/"),
        pytest.param(ODD, "/~0", "tilde", Status.VERIFIED, id="~0-is-~"),
        pytest.param(ODD, "/", "empty", Status.VERIFIED, id="empty-key"),
        pytest.param({"a": {"b": "nested"}, **ODD}, "/a~1b", "nested", REFUSED, id="a~1b"),
        pytest.param({"l": ["x", "y"]}, "/l/1", "y", Status.VERIFIED, id="index"),
        pytest.param({"l": ["x", "y"]}, "/l/01", "y", Status.REFUTED, id="leading-zero"),
        pytest.param({"l": ["x", "y"]}, "/l/-", "y", Status.REFUTED, id="dash"),
        pytest.param({"l": ["x", "y"]}, "/l/-1", "y", Status.REFUTED, id="negative"),
        pytest.param({"l": ["x", "y"]}, "/l/2", "y", Status.REFUTED, id="past-the-end"),
        pytest.param({"l": ["x", "y"]}, "/l/+1", "y", Status.REFUTED, id="plus"),
        pytest.param({"l": ["x", "y"]}, "/l/ 1", "y", Status.REFUTED, id="space"),
        pytest.param({"l": {"01": "y"}}, "/l/01", "y", Status.VERIFIED, id="key-01"),
        pytest.param({"l": "xy"}, "/l/1", "y", Status.REFUTED, id="into-a-string"),
    ],
)
def test_a_pointer_into_the_artifact_reads_as_rfc_6901_says(
    bench: Bench, document: dict[str, Any], at: str, said: str, status: Status | str
) -> None:
    """Refuted: the entry has no such place; refused: it has, with another value."""
    binds = [{"evidence": "/e", "role": "entry", "at": at}]
    run = bench.submit(bench.problem(binds), entry=json.dumps(document).encode())
    found, detail = _outcome(bench, run.submission, b'{"e": "%s"}' % said.encode())
    assert found == status, detail


@pytest.mark.parametrize(
    ("evidence", "status"),
    [
        pytest.param({"~1": "X"}, Status.VERIFIED, id="~01"),
        pytest.param({"/": "X"}, REFUSED, id="not-slash"),
        pytest.param({"l": ["Y", "X"]}, REFUSED, id="list-at-~01"),
    ],
)
def test_a_pointer_into_the_evidence_reads_as_rfc_6901_says(
    bench: Bench, evidence: dict[str, Any], status: Status | str
) -> None:
    binds = [{"evidence": "/~01", "role": "entry", "at": "/v"}]
    run = bench.submit(bench.problem(binds), entry=b'{"v": "X"}')
    found, detail = _outcome(bench, run.submission, json.dumps(evidence).encode())
    assert found == status, detail


NON_ASCII_DIGITS = [
    pytest.param("/l/\u00b2", id="superscript-two"),  # isdigit, int() refuses it
    pytest.param("/l/\u0661", id="arabic-indic-one"),  # isdigit, int() reads 1
    pytest.param("/l/\uff11", id="fullwidth-one"),
]


@pytest.mark.parametrize("at", NON_ASCII_DIGITS)
def test_an_index_of_non_ascii_digits_names_no_element(bench: Bench, at: str) -> None:
    binds = [{"evidence": "/e", "role": "entry", "at": at}]
    try:
        status, detail = _conclude(bench, binds, b'{"l": ["x", "y", "z"]}', b'{"e": "y"}')
    except ValueError as exc:  # InvalidInput is a ValueError too, and equally wrong here
        pytest.fail(f"recording the evidence raised {exc!r}")
    assert status is Status.REFUTED and "has no" in detail, detail


# ------------------------------------------------------------------ roles, folders, sha256


@pytest.mark.parametrize(
    "binds",
    [
        pytest.param([{"evidence": "/image", "role": "notes", "at": "/image"}], id="at"),
        pytest.param([{"evidence": "/image", "role": "notes"}], id="sha256"),
        pytest.param([*AT_IMAGE, {"evidence": "/image", "role": "notes"}], id="second-bind"),
    ],
)
def test_a_bind_into_an_optional_role_left_out_refutes(
    bench: Bench, binds: list[dict[str, Any]]
) -> None:
    status, detail = _conclude(bench, binds, b'{"image": "X"}', b'{"image": "X"}')
    assert status is Status.REFUTED and "no notes" in detail, detail


@pytest.mark.parametrize(
    ("inside", "said"),
    [
        pytest.param({"image": '"X"'}, "X", id="file-named-for-the-pointer"),
        pytest.param({"entry.json": '{"image": "X"}'}, "X", id="json-file-inside"),
    ],
)
def test_a_folder_never_holds_a_bind_at_a_pointer(
    bench: Bench, inside: dict[str, str], said: str
) -> None:
    folder = bench.root / "work" / f"folder-{next(bench.files)}"
    folder.mkdir(parents=True)
    for name, text in inside.items():
        (folder / name).write_text(text)
    run = bench.submit(bench.problem(AT_IMAGE), entry=folder)
    status, detail = bench.record(run.submission, json.dumps({"image": said}).encode())
    assert status is Status.REFUTED and "folder" in detail, detail


@pytest.mark.parametrize(
    ("said", "status"),
    [
        pytest.param(lambda sha: sha, Status.VERIFIED, id="the-sha256"),
        pytest.param(lambda sha: "sha256:" + sha, REFUSED, id="prefixed"),
        pytest.param(lambda sha: sha[:63], REFUSED, id="one-short"),
        pytest.param(lambda sha: sha + "\n", REFUSED, id="newline"),
        pytest.param(lambda sha: hashlib.sha256(b"other").hexdigest(), REFUSED, id="other"),
        pytest.param(lambda sha: [sha], REFUSED, id="in-a-list"),
    ],
)
def test_a_sha256_bind_holds_for_these_bytes_only(
    bench: Bench, said: Any, status: Status | str
) -> None:
    content = b"entry bytes %d\n" % next(bench.files)
    evidence = json.dumps({"digest": said(hashlib.sha256(content).hexdigest())}).encode()
    run = bench.submit(bench.problem(BY_SHA), entry=content)
    found, detail = _outcome(bench, run.submission, evidence)
    assert found == status, detail


def test_a_sha256_in_upper_case_hex_is_the_same_sha256(bench: Bench) -> None:
    content = b"upper-case entry\n"
    evidence = json.dumps({"digest": hashlib.sha256(content).hexdigest().upper()}).encode()
    status, detail = _conclude(bench, BY_SHA, content, evidence)
    assert status is Status.VERIFIED, detail


def test_minus_zero_is_the_number_zero(bench: Bench) -> None:
    status, detail = _conclude(bench, E, b'{"v": 0.0}', b'{"e": -0.0}')
    assert status is Status.VERIFIED, detail


# ------------------------------------------------------------------ withdrawn bytes


@pytest.mark.parametrize(
    ("binds", "evidence", "status"),
    [
        pytest.param(AT_IMAGE, {"image": "X"}, Status.INCONCLUSIVE, id="would-hold"),
        pytest.param(AT_IMAGE, {"image": "other"}, Status.INCONCLUSIVE, id="would-fail"),
        pytest.param(AT_IMAGE, {"image": "X", "ok": False}, Status.REFUTED, id="schema-fails"),
        pytest.param(AT_IMAGE, {"ok": True}, REFUSED, id="place-missing"),
        pytest.param(BY_SHA, {"digest": "0" * 64}, REFUSED, id="sha256-other"),
    ],
)
def test_withdrawing_the_entry_never_verifies_and_never_hides_a_refutation_it_can_see(
    bench: Bench, binds: list[dict[str, Any]], evidence: dict[str, Any], status: Status | str
) -> None:
    """With the bytes gone an ``at`` bind cannot be checked (inconclusive, never verified);
    what needs no bytes still decides: the rule refutes, evidence about other work (a missing
    place, another sha256) is refused."""
    schema = {"type": "object", "properties": {"ok": {"const": True}}}
    run = bench.submit(
        bench.problem(binds, schema), entry=b'{"image": "X", "w": %d}' % next(bench.files)
    )
    bench.platform.withdraw(run.submission, "entry", "bob")
    found, detail = _outcome(bench, run.submission, json.dumps({"ok": True, **evidence}).encode())
    assert found == status, detail


@pytest.mark.parametrize(
    ("binds", "notes"),
    [
        pytest.param([*AT_IMAGE, *BY_SHA], None, id="sha256-after-at"),
        pytest.param(
            [*AT_IMAGE, {"evidence": "/note", "role": "notes", "at": "/note"}],
            b'{"note": "mine"}',
            id="other-role-after-at",
        ),
        pytest.param(
            [*AT_IMAGE, {"evidence": "/gone", "role": "entry", "at": "/image"}, *BY_SHA],
            None,
            id="missing-place-after-at",
        ),
    ],
)
def test_a_withdrawn_bind_does_not_hide_one_that_refutes(
    bench: Bench, binds: list[dict[str, Any]], notes: bytes | None
) -> None:
    artifacts: dict[str, bytes | Path] = {"entry": b'{"image": "X", "w": %d}' % next(bench.files)}
    if notes is not None:
        artifacts["notes"] = notes
    run = bench.submit(bench.problem(binds), **artifacts)
    bench.platform.withdraw(run.submission, "entry", "bob")
    evidence = {"image": "other", "digest": "0" * 64, "note": "not mine"}
    status, detail = _outcome(bench, run.submission, json.dumps(evidence).encode())
    assert status == REFUSED, detail  # evidence about other work, whatever came first


def test_a_withdrawn_entry_concludes_alike_whoever_else_holds_its_bytes(bench: Bench) -> None:
    problem = bench.problem(AT_IMAGE)
    shared = b'{"image": "X", "w": "shared-%d"}' % next(bench.files)
    alone = b'{"image": "X", "w": "alone-%d"}' % next(bench.files)
    runs = [bench.submit(problem, entry=content) for content in (shared, alone)]
    bench.submit(problem, entry=shared)  # another submission keeps the shared bytes
    found = []
    for run in runs:
        bench.platform.withdraw(run.submission, "entry", "bob")
        found.append(bench.record(run.submission, b'{"image": "X"}'))
    assert found[0][0] is found[1][0], found


def test_a_recheck_after_withdrawal_does_not_unseat_a_refutation(bench: Bench) -> None:
    schema = {"type": "object", "properties": {"ok": {"const": True}}}
    run = bench.submit(
        bench.problem(AT_IMAGE, schema), entry=b'{"image": "X", "w": %d}' % next(bench.files)
    )
    status, _ = bench.record(run.submission, b'{"image": "X", "ok": false}')
    assert status is Status.REFUTED
    bench.platform.withdraw(run.submission, "entry", "bob")
    bench.platform.recheck(run.submission, "bob")
    status, _ = bench.record(run.submission, b'{"image": "X", "ok": true}')
    assert status is Status.INCONCLUSIVE
    assert bench.standing(run.submission) is Status.REFUTED


# ------------------------------------------------------------------ a supplier's slip


def test_a_report_about_other_work_does_not_count_against_this_work(bench: Bench) -> None:
    run = bench.submit(
        bench.problem(AT_IMAGE), entry=b'{"image": "X", "w": %d}' % next(bench.files)
    )
    try:
        bench.record(run.submission, b'{"image": "a-rival-entry"}')  # the supplier's slip
    except InvalidInput:
        pass  # refused at the door: the run still waits for the right report
    else:
        bench.platform.recheck(run.submission, "bob")
    status, detail = bench.record(run.submission, b'{"image": "X"}')
    assert status is Status.VERIFIED, detail
    assert bench.standing(run.submission) is Status.VERIFIED


# ------------------------------------------------------------------ what a bind may read


def test_a_role_named_like_a_sealed_reference_reads_the_participant_s_artifact(
    bench: Bench,
) -> None:
    """A bind names a role, and a run's artifacts are its submission's alone: a reference
    with the same key is never read, so its sealed bytes cannot reach the refusal (which
    quotes only the evidence, never the entry)."""
    references = [
        {"key": "entry", "path": "sealed/entry.json", "sealed_until": "2099-01-01T00:00:00Z"}
    ]
    sealed = json.dumps({"image": SEALED})
    contract = rule_contract(AT_IMAGE, references=references)
    folder = make_problem(
        bench.root / "sealed",
        problem="sealed-namesake",
        contract=contract,
        files={"sealed/entry.json": sealed},
    )
    bench.platform.publish(folder, "alice")
    for said in (SEALED, "probe"):
        run = bench.submit("sealed-namesake", entry=b'{"image": "mine-%d"}' % next(bench.files))
        status, detail = _outcome(bench, run.submission, json.dumps({"image": said}).encode())
        assert status == REFUSED and "about other work" in detail, detail
        assert "mine-" not in detail, detail  # the entry's value is not quoted either
        assert said == SEALED or SEALED not in detail, detail
        shown = json.dumps(bench.platform.show(run.submission, "bob").to_json())
        assert said == SEALED or SEALED not in shown  # only ever the evidence's own echo


@pytest.mark.parametrize("key", ["secret", "entry-schema"])
def test_a_bind_cannot_name_a_reference(bench: Bench, key: str) -> None:
    references = [{"key": key, "path": "sealed/s.json", "sealed_until": "2099-01-01T00:00:00Z"}]
    contract = rule_contract(
        [{"evidence": "/image", "role": key, "at": "/image"}], references=references
    )
    folder = make_problem(
        bench.root / "refs",
        problem=f"ref-{key}",
        contract=contract,
        files={"sealed/s.json": json.dumps({"image": SEALED})},
    )
    with pytest.raises((InvalidInput, FolderInvalid), match="not a role"):
        bench.platform.publish(folder, "alice")


# ------------------------------------------------------------------ revisions


def test_a_run_under_a_revision_without_binds_is_closed_by_revoking_its_rule(
    bench: Bench,
) -> None:
    """Runs are judged under their own revision: a run pending under a revision published
    before the binds still takes any report (the limit); revoking that revision's rule makes
    whatever is recorded there conclude nothing, while the new revision's binds hold."""
    bare = rule_contract(None)
    folders = bench.root / "evolving"
    bench.platform.publish(make_problem(folders, problem="evolving", contract=bare), "alice")
    old = bench.submit("evolving", entry=b'{"image": "X"}')
    bound = rule_contract(AT_IMAGE)
    bench.platform.publish(make_problem(folders, problem="evolving", contract=bound), "alice")
    new = bench.submit("evolving", entry=b'{"image": "X" }')
    assert _outcome(bench, new.submission, b'{"image": "other"}')[0] == REFUSED
    bare_rule = f"rule:{Contract.model_validate(bare).id}/bench"
    bench.platform.revoke(bare_rule, "published before its binds", "alice")
    status, detail = bench.record(old.submission, b'{"image": "other"}')
    assert status is Status.INCONCLUSIVE and "revoked" in detail, detail
