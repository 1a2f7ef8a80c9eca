"""The judgment cache cannot be forged, confused, or taught a limit's verdict.

An entry is a verdict assay will hand back without judging, so: an entry without the verifier's
signature (planted, tampered, signed with another key, moved to another key's path, copied from
another namespace, a symlink or FIFO) is a miss and is removed; different key components never
share a key (``["a", "b"]`` is not ``["a,b"]``); different limits are different keys; and a
verdict that a limit (or the machinery) produced is never stored, nor returned if found.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, InvalidInput, Status, build_check
from assay._signed import MAGIC, SignedStore, load_key
from assay.proofs import JudgmentCache, cache_key, judge, plan_for
from assay.proofs._verdict import Verdict
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

KEY = "ab" + "0" * 62
OTHER_KEY = "cd" + "1" * 62


def verdict(**changes: Any) -> Verdict:
    fields: dict[str, Any] = {
        "language": "coq",
        "finding": "does_not_check",
        "green": False,
        "exit_code": 1,
        "steps": [["/usr/bin/coqc", "Solution.v"]],
        "binary": "/usr/bin/coqc",
        "version": "8.16",
        "cwd": "/proof",
        "flags": [],
        "files": {"Solution.v": "0" * 64},
        "checked_from_source": True,
        "elapsed_ms": 5,
        "meaning": "green means coqc compiled it and the audit is closed",
    }
    return Verdict(**{**fields, **changes})


@pytest.fixture
def cache(tmp_path: Path) -> JudgmentCache:
    return JudgmentCache(tmp_path / "cache", key_file=tmp_path / "config" / "cache.key")


def entry(cache: JudgmentCache, key: str = KEY) -> Path:
    return cache.store.path(key)


def plant(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


GREEN = verdict(finding="checks", green=True, exit_code=0).model_dump_json().encode()

FORGERIES = {
    "plain_json_as_before": lambda c: GREEN,
    "no_signature": lambda c: MAGIC + b"\n" + GREEN,
    "random_signature": lambda c: MAGIC + b"f" * 64 + b"\n" + GREEN,
    "signature_of_another_verifier": lambda c: (
        (MAGIC + SignedStore(c.folder, "judgment", c.folder / "other.key")._mac(KEY, GREEN))
        + b"\n"
        + GREEN
    ),
    "signed_for_another_namespace": lambda c: (
        (MAGIC + SignedStore(c.folder, "conformance", c.store.key_file)._mac(KEY, GREEN))
        + b"\n"
        + GREEN
    ),
    "signed_for_another_key": lambda c: MAGIC + c.store._mac(OTHER_KEY, GREEN) + b"\n" + GREEN,
    "truncated": lambda c: MAGIC + c.store._mac(KEY, GREEN)[:10],
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_entry_is_a_miss_and_is_removed(cache: JudgmentCache, name: str) -> None:
    plant(entry(cache), FORGERIES[name](cache))
    assert cache.get(KEY) is None
    assert not entry(cache).exists()


@pytest.mark.parametrize(
    "tamper",
    [
        lambda raw: raw.replace(b'"green": false', b'"green": true'),
        lambda raw: raw.replace(b'"does_not_check"', b'"checks"'),
        lambda raw: raw + b" ",
        lambda raw: raw.replace(b'"exit_code": 1', b'"exit_code": 0'),
    ],
)
def test_a_tampered_verdict_is_a_miss(cache: JudgmentCache, tamper: Any) -> None:
    cache.put(KEY, verdict())
    original = entry(cache).read_bytes()
    assert cache.get(KEY) is not None
    tampered = tamper(original)
    assert tampered != original
    entry(cache).write_bytes(tampered)
    assert cache.get(KEY) is None
    assert not entry(cache).exists()


def test_an_entry_moved_to_another_key_is_a_miss(cache: JudgmentCache) -> None:
    cache.put(KEY, verdict())
    plant(entry(cache, OTHER_KEY), entry(cache).read_bytes())
    assert cache.get(OTHER_KEY) is None
    assert cache.get(KEY) is not None


def test_special_entries_are_misses_and_never_hang(cache: JudgmentCache, tmp_path: Path) -> None:
    path = entry(cache)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert cache.get(KEY) is None
    assert not path.exists()
    secret = tmp_path / "secret.json"
    secret.write_bytes(GREEN)
    path.symlink_to(secret)
    assert cache.get(KEY) is None
    assert not path.is_symlink() and secret.exists()


def test_entries_are_private_and_signed(cache: JudgmentCache) -> None:
    cache.put(KEY, verdict())
    path = entry(cache)
    assert stat.S_IMODE(os.stat(cache.folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cache.store.key_file).st_mode) == 0o600
    assert path.read_bytes().startswith(MAGIC)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left behind
    hit = cache.get(KEY)
    assert hit is not None and hit.cached


def test_the_key_is_created_once_and_shared(tmp_path: Path) -> None:
    key_file = tmp_path / "config" / "cache.key"
    first = load_key(key_file)
    assert load_key(key_file) == first and len(first) == 32
    writer = JudgmentCache(tmp_path / "cache", key_file=key_file)
    writer.put(KEY, verdict())
    reader = JudgmentCache(tmp_path / "cache", key_file=key_file)
    assert reader.get(KEY) is not None


def _loose(path: Path) -> None:
    load_key(path)
    os.chmod(path, 0o644)


def _linked(path: Path) -> None:
    target = path.parent / "elsewhere.key"
    load_key(target)
    path.symlink_to(target)


def _garbage(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("not a key\n")
    os.chmod(path, 0o600)


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True)
    os.mkfifo(path, 0o600)


@pytest.mark.parametrize("spoil", [_loose, _linked, _garbage, _fifo])
def test_an_unsafe_key_file_is_refused_never_used(tmp_path: Path, spoil: Any) -> None:
    key_file = tmp_path / "config" / "cache.key"
    spoil(key_file)
    cache = JudgmentCache(tmp_path / "cache", key_file=key_file)
    with pytest.raises(InvalidInput, match="cache key"):
        cache.put(KEY, verdict())
    plant(entry(cache), MAGIC + b"0" * 64 + b"\n" + GREEN)
    with pytest.raises(InvalidInput, match="cache key"):
        cache.get(KEY)


FILES = {"Solution.v": b"Theorem t : True. Proof. exact I. Qed.\n"}


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"allowed_axioms": ["a", "b"]}, {"allowed_axioms": ["a,b"]}),
        ({"allowed_axioms": ["a\0b"]}, {"allowed_axioms": ["a", "b"]}),
        ({"flags": ["-a b"]}, {"flags": ["-a", "b"]}),
        ({"flags": ["x"], "library": ""}, {"flags": [], "library": "x"}),
        ({"version": "8.16\u0001x"}, {"version": "8.16", "library": "x"}),
        ({"limits": {"memory_mb": 30}}, {"limits": {"memory_mb": 4096}}),
        ({"limits": {"timeout": 10.0}}, {"limits": {"timeout": 20.0}}),
    ],
)
def test_different_components_never_share_a_key(
    left: dict[str, Any], right: dict[str, Any]
) -> None:
    assert cache_key(FILES, **left) != cache_key(FILES, **right)


def test_file_names_and_bytes_never_share_a_key() -> None:
    assert cache_key({"a": b"b\0c"}) != cache_key({"a\0b": b"c"})
    assert cache_key({"a": b"x", "b": b"y"}) != cache_key({"a": b"y", "b": b"x"})
    assert cache_key({"a": b"x"}, flags=["y"]) == cache_key({"a": b"x"}, flags=["y"])


LIMIT_VERDICTS = {
    "memory": verdict(limit="memory"),
    "time": verdict(limit="time", exit_code=None, finding="machinery"),
    "machinery": verdict(finding="machinery", exit_code=137),
    "no_exit": verdict(exit_code=None),
    "stack": verdict(limit="stack"),
}


@pytest.mark.parametrize("name", sorted(LIMIT_VERDICTS))
def test_a_limit_verdict_is_never_stored(cache: JudgmentCache, name: str) -> None:
    cache.put(KEY, LIMIT_VERDICTS[name])
    assert not entry(cache).exists()
    # and one that got there anyway (signed, by an older assay) never comes back
    cache.store.put(KEY, LIMIT_VERDICTS[name].model_dump(mode="json"))
    assert cache.get(KEY) is None
    assert not entry(cache).exists()


PROOF = "Theorem two : 1 + 1 = 2.\nProof. reflexivity. Qed.\n"


@pytest.mark.slow
def test_limits_are_part_of_the_key_for_real(cache: JudgmentCache) -> None:
    need("coqc")
    sandbox = Sandbox(backend="bwrap")
    plan = plan_for("coq", PROOF, statement="1 + 1 = 2", name="two")
    roomy, other = Limits(timeout=120, memory_mb=4096), Limits(timeout=119, memory_mb=4096)
    first = judge("coq", plan, sandbox, roomy, cache).verdict
    assert first is not None and first.green and not first.cached
    again = judge("coq", plan, sandbox, roomy, cache).verdict
    assert again is not None and again.cached
    elsewhere = judge("coq", plan, sandbox, other, cache).verdict
    assert elsewhere is not None and not elsewhere.cached
    axioms = judge("coq", plan, sandbox, roomy, cache, allowed_axioms=["x"]).verdict
    assert axioms is not None and not axioms.cached


@pytest.mark.slow
def test_a_refutation_at_low_memory_does_not_reach_the_default(tmp_path: Path) -> None:
    """Issue 17: a correct proof under a memory limit it cannot run in, then at the default."""
    need("coqc")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "Two.v").write_text(PROOF)
    spec = {"kind": "coq", "file": "Two.v", "statement": "1 + 1 = 2", "name": "two"}
    ctx = CheckContext(
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        sandbox=Sandbox(backend="bwrap"),
        config=Config(judgment_cache=str(tmp_path / "cache")),
    )
    build_check({**spec, "memory_mb": 30}).run(ctx)  # coqc runs out of memory here
    default = build_check(spec).run(ctx)
    assert default.evidence is not None
    assert (default.status, default.evidence["cached"]) == (Status.VERIFIED, False), default.detail
    again = build_check(spec).run(ctx)
    assert again.evidence is not None
    assert (again.status, again.evidence["cached"]) == (Status.VERIFIED, True)


@pytest.mark.slow
def test_an_out_of_memory_verdict_is_never_served_from_the_cache(tmp_path: Path) -> None:
    """Whatever the judge concludes at a memory limit coqc cannot work in, it is judged afresh."""
    need("coqc")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "Two.v").write_text(PROOF)
    spec = {"kind": "coq", "file": "Two.v", "statement": "1 + 1 = 2", "name": "two"}
    ctx = CheckContext(
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        sandbox=Sandbox(backend="bwrap"),
        config=Config(judgment_cache=str(tmp_path / "cache")),
    )
    for _ in range(2):
        starved = build_check({**spec, "memory_mb": 30}).run(ctx)
        assert starved.status is not Status.REFUTED, starved.detail
        assert (starved.evidence or {}).get("cached") is not True
