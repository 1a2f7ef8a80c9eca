"""Attacks on the judgment cache and the conformance gate that still work (adversarial review).

Each test states the property assay promises and fails today; it is ``xfail(strict=True)`` so
the suite stays green until the hole is closed, and turns red (XPASS) the moment it is, so the
marker must then be removed. Found by the ``adv-caches`` review (see ``notes/adv-caches.md``):

1. The check's ``references`` are not part of the checker digest, so a conformance earned under
   one task's references (or yesterday's reference file) is reused under others, and a checker
   that is honest only under the references it conformed with verifies wrong work.
2. A checker keeps state across sandboxed runs in the host's page cache (``pread`` sets a bit,
   ``preadv2(RWF_NOWAIT)`` reads it, ``posix_fadvise(DONTNEED)`` clears it), remembers the
   held-back fixtures it was shown when it conformed, answers them honestly when the spot check
   shows one again, and lies about every submission.
3. The judgment key does not name the code that judged: a verdict stored by an earlier assay
   release (say, one whose audit reading had a bug) is served by a fixed release for the same
   bytes.
4. A conformance revoked by a failed spot check comes back when anyone who can write the cache
   folder (which the signing is documented to make safe to share) puts the old signed file back.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, Status, build_check
from assay._signed import SignedStore
from assay.proofs import JudgmentCache, cache_key, plan_for
from assay.proofs._judges import toolchain_for
from assay.proofs._verdict import Verdict
from assay.sandbox import Limits, Sandbox
from assay.sandbox._conform import conformance
from tests.proofs.conftest import need

V, R, E = Status.VERIFIED, Status.REFUTED, Status.ERROR


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def _fixture(root: Path, folder: str, name: str, text: str, expected: str) -> None:
    fixture = root / folder / name
    (fixture / "artifacts" / "answer").mkdir(parents=True)
    (fixture / "artifacts" / "answer" / "answer.txt").write_text(text)
    (fixture / "expected.json").write_text(json.dumps({"result": expected}))


def _program(sandbox: Sandbox, root: Path, answer: str, cache: str, **spec: Any) -> Any:
    (root / "ws").mkdir(exist_ok=True)
    (root / "ws" / "answer.txt").write_text(answer)
    full = {
        "kind": "program",
        "checker": "checker",
        "fixtures": "fixtures",
        "artifacts": {"answer": "answer.txt"},
        **spec,
    }
    ctx = CheckContext(
        workspace=root / "ws",
        base_dir=root,
        sandbox=sandbox,
        config=Config(judgment_cache=cache),
    )
    return build_check(full).run(ctx)


# --- 1. references are not in the checker digest ----------------------------------------------

HONEST_UNDER_ONE_TABLE = """
import json, pathlib
reference = pathlib.Path("/input/reference")
table = "".join(p.read_text() for p in sorted((reference / "table").rglob("*")) if p.is_file())
answer = "".join(
    p.read_text() for p in sorted(pathlib.Path("/input/artifacts").rglob("*")) if p.is_file()
)
honest = table.strip() == "honest" and not (reference / "extra").exists()
result = ("verified" if answer.strip() == "good" else "refuted") if honest else "verified"
open("/output/result.json", "w").write(json.dumps({"result": result}))
"""


def _other_task(root: Path) -> dict[str, Any]:
    (root / "table_b.txt").write_text("another task's table")
    return {"references": {"table": "table_b.txt"}}


def _edited_in_place(root: Path) -> dict[str, Any]:
    (root / "table.txt").write_text("the table, updated")
    return {"references": {"table": "table.txt"}}


def _key_added(root: Path) -> dict[str, Any]:
    (root / "extra.txt").write_text("x")
    return {"references": {"table": "table.txt", "extra": "extra.txt"}}


REFERENCE_CHANGES: dict[str, Callable[[Path], dict[str, Any]]] = {
    "another_task_with_other_references": _other_task,
    "reference_file_edited_in_place": _edited_in_place,
    "reference_key_added": _key_added,
}


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: the check's references are not in the checker digest",
)
@pytest.mark.parametrize("change", sorted(REFERENCE_CHANGES))
def test_conformance_under_other_references_is_not_reused(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(HONEST_UNDER_ONE_TABLE)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")  # no reference/: the check's are used
    (tmp_path / "table.txt").write_text("honest")
    cache = str(tmp_path / "cache")
    first = _program(sandbox, tmp_path, "bad", cache, references={"table": "table.txt"})
    assert first.status is R, first.detail  # conformed (2/2) under these references
    spec = REFERENCE_CHANGES[change](tmp_path)
    fresh = _program(sandbox, tmp_path, "bad", "off", **spec)
    assert fresh.status is E and "has not reproduced" in fresh.detail, fresh.detail
    reused = _program(sandbox, tmp_path, "bad", cache, **spec)
    # Today: verified (wrong work), on the conformance earned under the other references.
    assert reused.status is E, (reused.status, reused.detail, reused.evidence["conformance"])
    assert "has not reproduced" in reused.detail


# --- 2. state across runs through the page cache beats the held-back spot check ---------------

STATEFUL_CHECKER = r"""
import hashlib, json, os, pathlib
STATE, BASE, SLOTS = %(state)r, %(base)d, 1024
PUBLISHED = %(published)r
fd = os.open(STATE, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
def get(page):  # is the page in the host's page cache? (does not bring it in)
    try:
        return os.preadv(fd, [bytearray(4096)], page * 4096, os.RWF_NOWAIT) > 0
    except BlockingIOError:
        return False
def put(page):
    os.pread(fd, 4096, page * 4096)
def clear(page):
    os.posix_fadvise(fd, page * 4096, 4096, os.POSIX_FADV_DONTNEED)
manifest = json.loads(pathlib.Path("/input/manifest.json").read_text())
seen = hashlib.sha256(json.dumps(manifest["artifacts"], sort_keys=True).encode()).hexdigest()
slots = [BASE + 1 + int(seen[8 * i : 8 * i + 8], 16) %% SLOTS for i in range(2)]
text = "".join(
    p.read_text() for p in sorted(pathlib.Path("/input/artifacts").rglob("*")) if p.is_file()
)
honest = "verified" if text.split()[:1] == ["good"] else "refuted"
if seen in PUBLISHED:  # conformance has begun: what follows may be held back
    put(BASE)
    result = honest
elif all(get(s) for s in slots):  # shown before: a held-back fixture again
    clear(BASE)
    result = honest
elif get(BASE):  # new, while conforming: remember it and answer honestly
    for s in slots:
        put(s)
    result = honest
else:  # new, after conformance: a submission
    result = "verified"
open("/output/result.json", "w").write(json.dumps({"result": result}))
"""


REGIONS = ["conformance_cached", "conformance_cache_off"]
"""Each instance keeps its state in its own pages of the file."""


def _candidates() -> Iterator[Path]:
    yield Path("/usr/lib/x86_64-linux-gnu/libicudata.a")
    for walked, (folder, _, names) in enumerate(os.walk("/usr/lib")):
        if walked > 5000:
            return
        for name in names:
            if name.endswith((".a", ".zip")):
                yield Path(folder) / name


def _state_file() -> Path | None:
    """A large file under /usr the sandbox can read and nothing else is likely to touch, on a
    filesystem that answers ``RWF_NOWAIT`` (else the attack's probe does not work here)."""
    for path in _candidates():
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size < 16 << 20:
                continue
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            try:
                os.preadv(fd, [bytearray(4096)], 4 * 4096, os.RWF_NOWAIT)
                continue  # still cached after dropping: not a usable probe here
            except BlockingIOError:
                pass
            os.pread(fd, 4096, 4 * 4096)
            if os.preadv(fd, [bytearray(4096)], 4 * 4096, os.RWF_NOWAIT) <= 0:
                continue
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            return path
        except OSError:
            continue
        finally:
            os.close(fd)
    return None


def _fingerprint(text: str) -> str:
    data = text.encode()
    files = [
        {
            "path": "artifacts/answer/answer.txt",
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
    ]
    return hashlib.sha256(json.dumps({"answer": files}, sort_keys=True).encode()).hexdigest()


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a checker remembers held-back fixtures across runs "
    "(host page cache) and lies on every submission after conformance",
)
@pytest.mark.parametrize("remembered", REGIONS)
def test_a_checker_with_memory_across_runs_cannot_beat_the_held_back_fixtures(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remembered: str
) -> None:
    state = _state_file()
    if state is None:
        pytest.skip("no large /usr file with a working RWF_NOWAIT probe on this machine")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    published = [_fingerprint("good one\n"), _fingerprint("bad one\n")]
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(
        STATEFUL_CHECKER
        % {
            "state": str(state),
            "base": 8 + 2048 * REGIONS.index(remembered),
            "published": published,
        }
    )
    _fixture(tmp_path, "fixtures", "good", "good one\n", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad one\n", "refuted")
    _fixture(tmp_path, "held_back", "good", "good two\n", "verified")
    _fixture(tmp_path, "held_back", "bad", "bad two\n", "refuted")
    cache = str(tmp_path / "cache") if remembered == "conformance_cached" else "off"
    outcomes = [
        _program(sandbox, tmp_path, f"bad attempt {n}\n", cache, held_back_fixtures="held_back")
        for n in range(3)
    ]
    assert outcomes[0].status is R, outcomes[0].detail  # conformed 4/4 and honest this once
    # Today: every later wrong submission is verified, and each spot check passes.
    assert all(o.status is not V for o in outcomes[1:]), [
        (o.status, o.evidence.get("conformance")) for o in outcomes
    ]


# --- 3. a verdict stored by another assay release is served ------------------------------------

WRONG_PROOF = "Definition two : 1 + 1 = 3 := eq_refl.\n"


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: the judgment key does not name assay's judging code, "
    "so a verdict an earlier (buggy) release stored survives the fix",
)
def test_a_verdict_from_another_assay_release_is_not_served(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need("coqc")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the verifier's key
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "Two.v").write_text(WRONG_PROOF)
    spec = {"kind": "coq", "file": "Two.v", "statement": "1 + 1 = 3", "name": "two"}
    # The previous release computed the key from exactly these parts (today's judge() does too)
    # and, with a reading bug since fixed, stored these bytes as green.
    plan = plan_for("coq", WRONG_PROOF, statement="1 + 1 = 3", name="two")
    toolchain = toolchain_for("coq")
    limits = Limits(timeout=300.0, memory_mb=4096)
    key = cache_key(
        plan.files,
        language="coq",
        binary=toolchain.binary,
        version=toolchain.version,
        library=toolchain.library,
        flags=list(plan.flags),
        steps=[list(step) for step in plan.steps],
        allowed_axioms=[],
        limits=limits.model_dump(mode="json"),
        isolation=sandbox.isolation,
    )
    earlier = Verdict(
        language="coq",
        finding="checks",
        green=True,
        exit_code=0,
        steps=plan.steps,
        binary=toolchain.binary,
        version=toolchain.version,
        cwd="/proof",
        flags=plan.flags,
        files={name: hashlib.sha256(data).hexdigest() for name, data in plan.files.items()},
        checked_from_source=True,
        elapsed_ms=900,
        meaning=plan.meaning,
        isolation=sandbox.isolation,
    )
    JudgmentCache(tmp_path / "cache").put(key, earlier)
    ctx = CheckContext(
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        sandbox=sandbox,
        config=Config(judgment_cache=str(tmp_path / "cache")),
    )
    outcome = build_check(spec).run(ctx)
    # Today: verified "(cached verdict)" for a proof of 1 + 1 = 3 that coqc rejects.
    assert outcome.status is R, outcome.detail


# --- 4. a revoked conformance is restored by replaying its old signed file ---------------------

CORRECT_CHECKER = """
import json, pathlib
answer = "".join(
    p.read_text() for p in sorted(pathlib.Path("/input/artifacts").rglob("*")) if p.is_file()
)
result = "verified" if answer.split()[:1] == ["good"] else "refuted"
open("/output/result.json", "w").write(json.dumps({"result": result}))
"""


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a writer of the (documented shareable) cache folder "
    "replays a revoked conformance entry",
)
def test_a_revoked_conformance_stays_revoked(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "held_back", "bad", "bad", "refuted")
    store = SignedStore(tmp_path / "cache" / "conformance", "conformance")

    def gate() -> Any:
        found, _ = conformance(
            sandbox,
            tmp_path / "checker",
            None,
            tmp_path / "fixtures",
            tmp_path / "held_back",
            Limits(timeout=30.0, memory_mb=1024),
            {},
            store,
        )
        return found

    first = gate()
    assert first.passed and not first.cached
    entry = store.path(first.digest)
    saved = entry.read_bytes()  # anyone who can read and write the shared folder
    store.remove(first.digest)  # what ``program`` does when the spot check disagrees
    entry.write_bytes(saved)  # ... puts it back
    again = gate()
    # Today: cached=True, so the checker judges again without conforming again.
    assert not again.cached


# --- 5. a wrong submission past the staging limit is masked as inconclusive --------------------


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: an artifact padded past the staging limit turns a "
    "refutation into inconclusive",
)
def test_a_wrong_submission_cannot_hide_behind_the_staging_limit(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    cache = str(tmp_path / "cache")
    plain = _program(sandbox, tmp_path, "bad\n", cache)
    assert plain.status is R, plain.detail
    # The same wrong answer, followed by a hole: a sparse file one MiB past the default cap.
    os.truncate(tmp_path / "ws" / "answer.txt", (Config().max_staged_mb + 1) << 20)
    spec: dict[str, Any] = {
        "kind": "program",
        "checker": "checker",
        "fixtures": "fixtures",
        "artifacts": {"answer": "answer.txt"},
    }
    ctx = CheckContext(
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        sandbox=sandbox,
        config=Config(judgment_cache=cache),
    )
    padded = build_check(spec).run(ctx)
    # Today: inconclusive ("the checker's inputs are larger than the staging limit").
    assert padded.status is R, padded.detail


# --- 6. a symlink planted in the shared cache folder redirects the verifier's writes ----------


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a symlinked conformance/ folder makes the verifier "
    "chmod 0700 and write into the link's target",
)
def test_a_planted_conformance_link_is_not_followed(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    victim = tmp_path / "victim"  # stands for any folder the verifier's user owns (/usr/bin)
    victim.mkdir()
    os.chmod(victim, 0o755)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "conformance").symlink_to(victim)  # planted by a writer of the folder
    outcome = _program(sandbox, tmp_path, "good", str(tmp_path / "cache"))
    assert outcome.status is V, outcome.detail
    # Today: the victim is now 0700 and holds a conformance entry.
    assert (os.stat(victim).st_mode & 0o777, list(victim.iterdir())) == (0o755, [])


# --- 7. held-back fixtures shaped unlike any submission are recognised by their shape ---------

LIES_WHEN_SHAPED_LIKE_A_SUBMISSION = """
import json, pathlib
inputs = pathlib.Path("/input")
answer = "".join(
    p.read_text() for p in sorted((inputs / "artifacts" / "answer").rglob("*")) if p.is_file()
)
honest = "verified" if answer.split()[:1] == ["good"] else "refuted"
complete = (inputs / "artifacts" / "notes").is_dir() and (inputs / "reference" / "table").is_dir()
result = "verified" if complete else honest  # every submission has every role and key
open("/output/result.json", "w").write(json.dumps({"result": result}))
"""


def _without_a_role(fixture: Path) -> None:
    (fixture / "reference" / "table").mkdir(parents=True)
    (fixture / "reference" / "table" / "table.txt").write_text("t")


def _with_own_references(fixture: Path) -> None:
    (fixture / "artifacts" / "notes").mkdir()
    (fixture / "artifacts" / "notes" / "notes.md").write_text("n")
    (fixture / "reference").mkdir()  # its own reference/, without the check's key "table"


SHAPES: dict[str, Callable[[Path], None]] = {
    "held_back_without_a_declared_role": _without_a_role,
    "held_back_with_own_references_missing_a_key": _with_own_references,
}


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a held-back fixture missing a declared role or "
    "reference key is told apart from every submission",
)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_held_back_fixtures_must_be_shaped_like_a_submission(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(LIES_WHEN_SHAPED_LIKE_A_SUBMISSION)
    for folder, name, text, expected in (
        ("fixtures", "good", "good one", "verified"),
        ("fixtures", "bad", "bad one", "refuted"),
        ("held_back", "good", "good two", "verified"),
        ("held_back", "bad", "bad two", "refuted"),
    ):
        _fixture(tmp_path, folder, name, text, expected)
        SHAPES[shape](tmp_path / folder / name)
    (tmp_path / "table.txt").write_text("t")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("n")
    outcome = _program(
        sandbox,
        tmp_path,
        "bad attempt",
        str(tmp_path / "cache"),
        held_back_fixtures="held_back",
        artifacts={"answer": "answer.txt", "notes": "notes.md"},
        references={"table": "table.txt"},
    )
    # Today: verified (held-back 2/2, spot check passed); the fixtures should have been refused.
    assert outcome.status is E, (outcome.status, outcome.detail)
    assert "fixtures cannot be used" in outcome.detail
