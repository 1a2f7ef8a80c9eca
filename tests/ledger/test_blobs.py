"""The blob store keeps bytes by their sha256 in a private folder, hands back only bytes that
still match their hash, stores folders as files plus a manifest, and refuses links and
oversized input."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from assay import InvalidInput
from assay.ledger import Blob, BlobMissing, BlobStore, LedgerError


@pytest.fixture
def store(tmp_path: Path) -> BlobStore:
    return BlobStore(tmp_path / "blobs")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_bytes_round_trip_by_hash_in_a_private_folder(store: BlobStore) -> None:
    data = b"the assignment\n"
    sha = hashlib.sha256(data).hexdigest()
    assert not store.has(sha)
    assert store.put_bytes(data) == Blob(sha256=sha, size=len(data))
    assert store.put_bytes(data) == Blob(sha256=sha, size=len(data))  # same bytes: same blob
    assert store.has(sha)
    assert store.read(sha) == data
    path = store.root / sha[:2] / sha
    assert path.read_bytes() == data
    assert _mode(path) == 0o600 and _mode(store.root) == 0o700 and _mode(path.parent) == 0o700
    assert [p.name for p in store.root.iterdir()] == [sha[:2]]  # no temporary file left


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(b"other bytes"), id="replaced"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:-1]), id="truncated"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes() + b"\0"), id="extended"),
    ],
)
def test_a_blob_changed_on_disk_is_never_served(store: BlobStore, damage: object) -> None:
    blob = store.put_bytes(b"reference bytes")
    damage(store.root / blob.sha256[:2] / blob.sha256)  # type: ignore[operator]
    with pytest.raises(LedgerError, match="corrupt"):
        store.read(blob.sha256)


def test_a_deleted_blob_is_missing(store: BlobStore) -> None:
    blob = store.put_bytes(b"withdrawn")
    store.delete(blob.sha256, tree=False)
    store.delete(blob.sha256, tree=False)  # again: nothing to do, no error
    assert not store.has(blob.sha256)
    with pytest.raises(BlobMissing) as caught:
        store.read(blob.sha256)
    assert caught.value.sha256 == blob.sha256


@pytest.mark.parametrize("sha", ["", "abc", "A" * 64, "../" + "0" * 61, "0" * 63 + "/"])
def test_a_name_that_is_not_a_sha256_is_refused(store: BlobStore, sha: str) -> None:
    with pytest.raises(InvalidInput, match="sha256"):
        store.read(sha)


def test_put_file_stores_a_regular_file_within_its_cap(store: BlobStore, tmp_path: Path) -> None:
    source = tmp_path / "answer.txt"
    source.write_bytes(b"x" * 100)
    blob = store.put_file(source, max_bytes=100)
    assert blob.size == 100 and store.read(blob.sha256) == b"x" * 100
    with pytest.raises(InvalidInput, match="larger than 99 bytes") as caught:
        store.put_file(source, max_bytes=99)
    assert caught.value.where == str(source)


def test_put_file_refuses_links_folders_and_fifos(store: BlobStore, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("the verifier's key")
    (tmp_path / "link").symlink_to(secret)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name in ("link", "fifo", "folder"):
        with pytest.raises(InvalidInput, match="not a regular file"):
            store.put_file(tmp_path / name, max_bytes=1000)
    with pytest.raises(InvalidInput, match="cannot read"):
        store.put_file(tmp_path / "absent", max_bytes=1000)
    assert not store.root.exists() or not any(store.root.rglob("*"))


def _tree(root: Path) -> None:
    (root / "src" / "deep").mkdir(parents=True)
    (root / "README").write_text("read me\n")
    (root / "src" / "main.py").write_text("print(1)\n")
    (root / "src" / "deep" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "src" / "deep" / "run.sh").chmod(0o755)
    (root / "src" / "same.txt").write_text("read me\n")  # same bytes as README: one blob


def test_a_tree_round_trips_with_its_manifest(store: BlobStore, tmp_path: Path) -> None:
    _tree(tmp_path / "work")
    blob = store.put_tree(tmp_path / "work", max_bytes=10_000)
    assert blob.size == 8 + 9 + 18 + 8
    manifest = json.loads(store.read(blob.sha256))
    assert [row[0] for row in manifest["tree"]] == [
        "README",
        "src/deep/run.sh",
        "src/main.py",
        "src/same.txt",
    ]
    assert [row[3] for row in manifest["tree"]] == [False, True, False, False]
    assert manifest["tree"][0][1] == hashlib.sha256(b"read me\n").hexdigest()
    assert store.put_tree(tmp_path / "work", max_bytes=10_000) == blob  # stable id
    out = tmp_path / "out"
    store.materialize(blob.sha256, out, tree=True)
    assert (out / "src" / "deep" / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert os.access(out / "src" / "deep" / "run.sh", os.X_OK)
    assert not os.access(out / "src" / "main.py", os.X_OK)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README",
        "src/deep/run.sh",
        "src/main.py",
        "src/same.txt",
    ]
    store.materialize(blob.sha256, tmp_path / "one", tree=False)  # the manifest itself
    assert json.loads((tmp_path / "one").read_text()) == manifest


def test_a_tree_with_a_link_or_over_its_cap_is_refused(store: BlobStore, tmp_path: Path) -> None:
    _tree(tmp_path / "work")
    with pytest.raises(InvalidInput, match="MiB"):
        store.put_tree(tmp_path / "work", max_bytes=20)
    (tmp_path / "work" / "src" / "key").symlink_to("/etc/passwd")
    with pytest.raises(InvalidInput, match="symbolic link") as caught:
        store.put_tree(tmp_path / "work", max_bytes=10_000)
    assert caught.value.where == str(tmp_path / "work" / "src" / "key")
    with pytest.raises(InvalidInput, match="not a folder"):
        store.put_tree(tmp_path / "work" / "README", max_bytes=10_000)
    assert not [p for p in store.root.iterdir() if p.name.startswith(".")]  # scratch removed


def test_a_tree_member_changed_on_disk_is_never_materialized(
    store: BlobStore, tmp_path: Path
) -> None:
    _tree(tmp_path / "work")
    blob = store.put_tree(tmp_path / "work", max_bytes=10_000)
    member = hashlib.sha256(b"print(1)\n").hexdigest()
    (store.root / member[:2] / member).write_bytes(b"print(2)\n")
    with pytest.raises(LedgerError, match="corrupt"):
        store.materialize(blob.sha256, tmp_path / "out", tree=True)


def test_deleting_a_tree_removes_its_files_and_manifest(store: BlobStore, tmp_path: Path) -> None:
    _tree(tmp_path / "work")
    blob = store.put_tree(tmp_path / "work", max_bytes=10_000)
    members = [row[1] for row in json.loads(store.read(blob.sha256))["tree"]]
    store.delete(blob.sha256, tree=True)
    store.delete(blob.sha256, tree=True)
    assert not store.has(blob.sha256)
    assert not any(store.has(sha) for sha in members)


@pytest.mark.parametrize(
    "listing",
    [
        [["../escape", "0" * 64, 1, False]],
        [["/etc/passwd", "0" * 64, 1, False]],
        [["ok", "not-a-sha", 1, False]],
        "not a list",
    ],
)
def test_a_manifest_naming_an_unsafe_path_is_refused(
    store: BlobStore, tmp_path: Path, listing: object
) -> None:
    manifest = store.put_bytes(json.dumps({"tree": listing}).encode())
    with pytest.raises(LedgerError, match=r"tree|manifest"):
        store.materialize(manifest.sha256, tmp_path / "out", tree=True)
    assert not (tmp_path / "escape").exists()
