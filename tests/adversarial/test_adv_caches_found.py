"""Attacks on the judgment cache and the conformance gate (adversarial review ``adv-caches``).

Each test states the property assay promises. All but one are closed and pass; the one left
(2, a checker's memory across runs through the host's page cache) is a documented limit of
held-back spot checks that no namespace closes, kept ``xfail(strict=True)`` so it turns red the
day it is closed. Found by the ``adv-caches`` review (see ``notes/adv-caches.md``):

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
   folder puts the old signed file back. Fixed by refusing a cache folder that is not private
   (another owner, or writable by others); the verifier's own uid can still replay (documented).
5. A wrong submission padded past the staging limit (a sparse file) is ``inconclusive``, not
   refuted: a refutation masked by the submission's own size.
6. A symlink planted as the cache's ``conformance/`` folder makes the verifier (root) chmod the
   link's target 0700 and write entries into it.
7. Held-back fixtures that lack a declared role, or bring their own ``reference/`` without the
   check's keys, have a shape no submission has: the checker tells them apart and lies otherwise.
8. A checker, its fixtures or a reference inside the workspace is written by the agent it judges.

Also (hardening): a fixture set where every fixture expects ``verified`` is refused (an
always-yes checker would conform), held-back fixtures are counted but never named in outcomes,
and a reference that overlaps the held-back fixtures is refused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, InvalidInput, Status, build_check
from assay._signed import SignedStore, UnsafeCache
from assay.proofs import JudgmentCache, cache_key, plan_for
from assay.proofs._judges import toolchain_for
from assay.proofs._verdict import Verdict
from assay.sandbox import Limits, Sandbox
from assay.sandbox._conform import conformance, load_fixtures
from tests.proofs.conftest import need

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR


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
    # Was: verified (wrong work), on the conformance earned under the other references.
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
    reason="documented limit (docs/decisions.md, External checkers): a checker remembers "
    "held-back fixtures across runs through the host's page cache and lies on every submission "
    "after conformance; needs trusted checker authors or a VM per run",
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
def test_a_verdict_from_another_assay_release_is_not_served(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need("coqc")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the verifier's key
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "Two.v").write_text(WRONG_PROOF)
    spec = {"kind": "coq", "file": "Two.v", "statement": "1 + 1 = 3", "name": "two"}
    # The previous release computed the key from exactly these parts (today's judge() does too)
    # and, with a reading bug since fixed, stored these bytes as green. Its judging code differed.
    plan = plan_for("coq", WRONG_PROOF, statement="1 + 1 = 3", name="two")
    toolchain = toolchain_for("coq")
    limits = Limits(timeout=300.0, memory_mb=4096)
    parts: dict[str, Any] = {
        "language": "coq",
        "binary": toolchain.binary,
        "version": toolchain.version,
        "library": toolchain.library,
        "flags": list(plan.flags),
        "steps": [list(step) for step in plan.steps],
        "allowed_axioms": [],
        "limits": limits.model_dump(mode="json"),
        "isolation": sandbox.isolation,
    }
    with monkeypatch.context() as earlier_release:
        earlier_release.setattr(
            "assay.proofs._cache.judging_code", lambda: "0.1.0/an-earlier-judging-code"
        )
        key = cache_key(plan.files, **parts)
    assert key != cache_key(plan.files, **parts)  # today's key names today's code
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
    # Was: verified "(cached verdict)" for a proof of 1 + 1 = 3 that coqc rejects.
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


def _group_writable(folder: Path) -> None:
    os.chmod(folder, 0o770)


def _world_writable(folder: Path) -> None:
    os.chmod(folder, 0o777)


def _owned_by_another_user(folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    os.chown(folder, 65534, 65534)


SHARED: dict[str, Callable[[Path], None]] = {
    "group_writable": _group_writable,
    "world_writable": _world_writable,
    "owned_by_another_user": _owned_by_another_user,
}


@pytest.mark.parametrize("shared", sorted(SHARED))
@pytest.mark.parametrize("level", ["cache", "conformance"])
def test_a_revoked_conformance_cannot_be_replayed_through_a_shared_folder(
    sandbox: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    shared: str,
    level: str,
) -> None:
    """A signature stops forgery, not replay: so the cache folder must be private, and a folder
    someone else could write is not used at all (nothing read, nothing written)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad one", "refuted")
    _fixture(tmp_path, "held_back", "bad", "bad", "refuted")
    store = SignedStore(tmp_path / "cache", "conformance", section="conformance")

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
    assert gate().cached  # a private folder is used
    entry = store.path(first.digest)
    saved = entry.read_bytes()  # a writer of the folder keeps a copy ...
    store.remove(first.digest)  # ... program revokes it (the spot check disagreed) ...
    SHARED[shared](tmp_path / "cache" if level == "cache" else tmp_path / "cache" / "conformance")
    entry.write_bytes(saved)  # ... and the writer puts it back
    with caplog.at_level(logging.WARNING, logger="assay.cache"):
        again = gate()
    assert not again.cached  # the folder is refused: the checker conforms again
    assert store.refused is not None and str(tmp_path / "cache") in store.refused
    assert "private" in store.refused
    assert any("not using the conformance cache" in r.getMessage() for r in caplog.records)
    assert entry.read_bytes() == saved  # nothing was written into the refused folder


def test_a_refused_cache_folder_is_reported_and_never_decides(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    (tmp_path / "cache").mkdir(mode=0o700)
    os.chmod(tmp_path / "cache", 0o777)
    for answer, status in (("good", V), ("bad", R), ("good", V)):
        outcome = _program(sandbox, tmp_path, answer, str(tmp_path / "cache"))
        assert outcome.status is status, outcome.detail
        conformance = outcome.evidence["conformance"]
        assert conformance["cached"] is False
        assert "written by others" in conformance["cache"]
    assert list((tmp_path / "cache").iterdir()) == []


# --- 5. a wrong submission past the staging limit is masked as inconclusive --------------------


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
    # Was: inconclusive ("the checker's inputs are larger than the staging limit").
    assert padded.status is R, padded.detail
    assert "the submission is larger than the 256 MiB staging limit" in padded.detail


def test_references_too_large_to_stage_stay_inconclusive(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the submission's own size is a finding about the work; the author's is not."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    (tmp_path / "table.txt").write_text("t")
    os.truncate(tmp_path / "table.txt", (Config().max_staged_mb + 1) << 20)
    outcome = _program(sandbox, tmp_path, "bad\n", "off", references={"table": "table.txt"})
    assert outcome.status is I, outcome.detail
    assert "reference input 'table' is larger than" in outcome.detail


def test_a_submission_that_fills_what_the_references_leave_is_refuted(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """References and submission share one staging budget; the submission may not push the
    total past it to turn its refutation into "could not check"."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    (tmp_path / "table.txt").write_text("t")
    os.truncate(tmp_path / "table.txt", (Config().max_staged_mb - 1) << 20)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "answer.txt").write_text("bad\n")
    os.truncate(tmp_path / "ws" / "answer.txt", 2 << 20)
    spec: dict[str, Any] = {
        "kind": "program",
        "checker": "checker",
        "fixtures": "fixtures",
        "artifacts": {"answer": "answer.txt"},
        "references": {"table": "table.txt"},
    }
    ctx = CheckContext(
        workspace=tmp_path / "ws", base_dir=tmp_path, sandbox=sandbox, config=Config()
    )
    outcome = build_check(spec).run(ctx)
    assert outcome.status is R, outcome.detail
    assert "leaves beside the references" in outcome.detail


# --- 6. a symlink planted in the shared cache folder redirects the verifier's writes ----------


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
    os.chmod(tmp_path / "cache", 0o700)
    outcome = _program(sandbox, tmp_path, "good", str(tmp_path / "cache"))
    assert outcome.status is V, outcome.detail
    # Was: the victim is now 0700 and holds a conformance entry.
    assert (os.stat(victim).st_mode & 0o777, list(victim.iterdir())) == (0o755, [])
    assert outcome.evidence["conformance"]["cache"].startswith("not used:")


@pytest.mark.parametrize("where", ["cache_root", "bucket"])
def test_a_planted_link_anywhere_in_the_store_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Every level (the cache folder, its section, the ``kk/`` bucket) is opened O_NOFOLLOW."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    victim = tmp_path / "victim"
    victim.mkdir()
    os.chmod(victim, 0o755)
    store = SignedStore(tmp_path / "cache", "conformance", section="conformance")
    key = "ab" + "0" * 62
    if where == "cache_root":
        (tmp_path / "cache").symlink_to(victim)
    else:
        (tmp_path / "cache" / "conformance").mkdir(parents=True, mode=0o700)
        os.chmod(tmp_path / "cache", 0o700)
        (tmp_path / "cache" / "conformance" / "ab").symlink_to(victim)
    (victim / f"{key}.json").write_text("planted")
    store.put(key, {"passed": True})
    assert store.get(key) is None
    store.remove(key)
    assert store.refused is not None
    assert (os.stat(victim).st_mode & 0o777, sorted(p.name for p in victim.iterdir())) == (
        0o755,
        [f"{key}.json"],
    )


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
    # Was: verified (held-back 2/2, spot check passed); the fixtures should have been refused.
    assert outcome.status is E, (outcome.status, outcome.detail)
    assert "fixtures cannot be used" in outcome.detail
    assert str(tmp_path / "held_back") in outcome.detail  # names the fixture for its author


# --- 8. verifier-side inputs the agent can write ------------------------------------------------

YES_MAN = """
import json
open("/output/result.json", "w").write(json.dumps({"result": "verified"}))
"""


def _checker_in_workspace(root: Path) -> dict[str, Any]:
    (root / "ws" / "checker" / "check.py").write_text(YES_MAN)  # the agent rewrites it...
    for name in ("good", "bad"):  # ... and the fixtures it conforms to
        (root / "ws" / "fixtures" / name / "expected.json").write_text('{"result": "verified"}')
    return {"checker": "ws/checker", "fixtures": "ws/fixtures"}


def _references_in_workspace(root: Path) -> dict[str, Any]:
    (root / "ws" / "table.txt").write_text("bad")  # the agent edits the data it is judged on
    return {"references": {"table": "ws/table.txt"}}


WRITABLE: dict[str, Callable[[Path], dict[str, Any]]] = {
    "checker_and_fixtures_in_the_workspace": _checker_in_workspace,
    "reference_in_the_workspace": _references_in_workspace,
}

AGAINST_THE_TABLE = """
import json, pathlib
def text(folder):
    return "".join(p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()).strip()
same = text(pathlib.Path("/input/artifacts/answer")) == text(pathlib.Path("/input/reference/table"))
open("/output/result.json", "w").write(json.dumps({"result": "verified" if same else "refuted"}))
"""


@pytest.mark.parametrize("where", sorted(WRITABLE))
def test_verifier_inputs_inside_the_workspace_are_refused(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "ws" / "checker").mkdir(parents=True)
    (tmp_path / "ws" / "checker" / "check.py").write_text(AGAINST_THE_TABLE)
    _fixture(tmp_path, "ws/fixtures", "good", "good", "verified")
    _fixture(tmp_path, "ws/fixtures", "bad", "bad", "refuted")
    for name in ("good", "bad"):
        (tmp_path / "ws" / "fixtures" / name / "reference" / "table").mkdir(parents=True)
        (tmp_path / "ws" / "fixtures" / name / "reference" / "table" / "t.txt").write_text("good")
    (tmp_path / "ws" / "table.txt").write_text("good")
    spec: dict[str, Any] = {
        "checker": "ws/checker",
        "fixtures": "ws/fixtures",
        "references": {"table": "ws/table.txt"},
    }
    spec.update(WRITABLE[where](tmp_path))
    outcome = _program(sandbox, tmp_path, "bad", str(tmp_path / "cache"), **spec)
    # Was: verified. The answer "bad" is wrong against the author's table ("good").
    assert outcome.status is E, (outcome.status, outcome.detail)
    assert "workspace" in outcome.detail
    assert outcome.detail.startswith(("checker (", "fixtures (", "references.table (")), (
        outcome.detail
    )


def test_a_verifier_folder_that_contains_the_workspace_is_refused(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    outcome = _program(sandbox, tmp_path, "bad", "off", references={"everything": "."})
    assert outcome.status is E, outcome.detail
    assert "references.everything ('.') contains the agent's workspace" in outcome.detail


# --- hardening ----------------------------------------------------------------------------------


def test_a_fixture_set_that_only_says_yes_is_refused(tmp_path: Path) -> None:
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "also_good", "good too", "verified")
    with pytest.raises(InvalidInput, match="always says yes would conform"):
        load_fixtures(tmp_path / "fixtures")


ANSWERS_BY_NAME = """
import json, pathlib
answer = "".join(
    p.read_text() for p in sorted(pathlib.Path("/input/artifacts").rglob("*")) if p.is_file()
)
result = "refuted" if answer.startswith("bad") else "verified"
if answer == "bad held-back":
    result = "verified"  # wrong about the held-back fixture
open("/output/result.json", "w").write(json.dumps({"result": result}))
"""


def test_held_back_fixtures_are_counted_never_named(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "check.py").write_text(ANSWERS_BY_NAME)
    _fixture(tmp_path, "fixtures", "good", "good", "verified")
    _fixture(tmp_path, "fixtures", "bad", "bad", "refuted")
    _fixture(tmp_path, "held_back", "secret_name_q7", "bad held-back", "refuted")
    _fixture(tmp_path, "held_back", "secret_name_k2", "good held-back", "verified")
    outcome = _program(sandbox, tmp_path, "bad", "off", held_back_fixtures="held_back")
    assert outcome.status is E
    assert "3 of 4 fixtures reproduced (1 held-back fixture disagreed)" in outcome.detail
    assert "secret_name" not in json.dumps(outcome.model_dump(mode="json"))
    (tmp_path / "checker" / "check.py").write_text(CORRECT_CHECKER)
    honest = _program(sandbox, tmp_path, "bad", "off", held_back_fixtures="held_back")
    assert honest.status is R, honest.detail
    assert honest.evidence["conformance"]["spot_check"] == {
        "held_back_fixtures_run": 1,
        "agreed": True,
    }
    assert "secret_name" not in json.dumps(honest.model_dump(mode="json"))


@pytest.mark.parametrize("reference", [".", "held_back", "held_back/secret_name_q7"])
def test_references_that_overlap_the_held_back_fixtures_are_refused(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: str
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "verifier" / "checker").mkdir(parents=True)
    (tmp_path / "verifier" / "checker" / "check.py").write_text(CORRECT_CHECKER)
    root = tmp_path / "verifier"
    _fixture(root, "fixtures", "good", "good", "verified")
    _fixture(root, "fixtures", "bad", "bad", "refuted")
    _fixture(root, "held_back", "secret_name_q7", "bad two", "refuted")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "answer.txt").write_text("bad")
    spec = {
        "kind": "program",
        "checker": "checker",
        "fixtures": "fixtures",
        "held_back_fixtures": "held_back",
        "artifacts": {"answer": "answer.txt"},
        "references": {"data": reference},
    }
    ctx = CheckContext(
        workspace=tmp_path / "ws",
        base_dir=root,
        sandbox=sandbox,
        config=Config(judgment_cache="off"),
    )
    outcome = build_check(spec).run(ctx)
    assert outcome.status is E, outcome.detail
    assert "reference 'data' overlaps the held-back fixtures" in outcome.detail


@pytest.mark.parametrize("mode", [0o770, 0o777])
def test_a_key_folder_others_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    """Whoever can write the key's folder can swap the key: it is refused, never used."""
    key_file = tmp_path / "config" / "assay" / "cache.key"
    store = SignedStore(tmp_path / "cache", "judgment", key_file)
    store.put("ab" + "0" * 62, {"x": 1})
    os.chmod(key_file.parent, mode)
    with pytest.raises(UnsafeCache, match="written by others"):
        SignedStore(tmp_path / "cache", "judgment", key_file).put("cd" + "0" * 62, {"x": 2})
    with pytest.raises(UnsafeCache, match="written by others"):
        SignedStore(tmp_path / "cache", "judgment", key_file).get("ab" + "0" * 62)
