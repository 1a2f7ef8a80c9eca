"""What writing an uploaded archive does to the server's disk (helper "adv-webarchive"), beyond
the 45 hostile members of test_archive_extraction.py:

- **Folder amplification.** The member cap (2000) counted members only, while every folder a
  name implies is written too: a 10 kB ``.tar.gz`` of 2000 names 16 folders deep made about
  32,000 folders (4 s of writing here). The cap now counts the files and folders that would
  be written.
- **A folder swapped for a link while writing** (a local process racing the writer): the writer
  opens each folder relative to its parent's descriptor with ``O_NOFOLLOW``, so the write fails
  and nothing lands where the link points.
- **Scratch folders left behind**: when publishing fails after extraction (the platform's own
  failure, a refusal by the caller's rule, an unwritable member), the scratch folder is gone.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

from assay import Config
from assay._errors import InvalidInput
from assay.platform import (
    ArchiveLimits,
    Platform,
    _archive,
    extract_problem_archive,
    publish_archive,
)

PROBLEM = b"id: arc-writes\ntitle: T\nstatement: s.md\n"


def deep_names(count: int, depth: int, kind: str) -> bytes:
    """The problem, then ``count`` empty files each ``depth`` folders deep, in folders of their
    own: few members, many folders."""
    names = ["/".join([f"d{k}", *(f"{j}" for j in range(depth - 2)), "f"]) for k in range(count)]
    files = [("problem.yaml", PROBLEM), ("s.md", b"x"), *((n, b"") for n in names)]
    buffer = io.BytesIO()
    if kind == "tar":
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for name, data in files:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    else:
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files:
                archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("kind", ["tar", "zip"])
@pytest.mark.parametrize(("count", "depth"), [(1990, 16), (400, 8), (150, 16)])
def test_a_small_archive_of_deep_names_makes_no_more_than_the_cap_of_folders(
    tmp_path: Path, kind: str, count: int, depth: int
) -> None:
    data = deep_names(count, depth, kind)
    assert len(data) < 400_000  # a zip names every member twice; a tar.gz is about 10 kB
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(InvalidInput, match="makes more than 2000 files and folders"):
        extract_problem_archive(data, scratch)
    assert list(scratch.iterdir()) == []


def test_names_that_share_their_folders_are_counted_once(tmp_path: Path) -> None:
    """The control: 1900 files in one folder 14 deep are 1900 + 14 entries: written."""
    names = ["/".join([*(f"{j}" for j in range(14)), f"f{k}"]) for k in range(1900)]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in [("problem.yaml", PROBLEM), ("s.md", b"x"), *((n, b"") for n in names)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert extract_problem_archive(buffer.getvalue(), scratch) == scratch
    assert sum(1 for _ in scratch.rglob("*")) == 2 + 14 + 1900


def test_a_folder_swapped_for_a_link_while_writing_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in [("problem.yaml", PROBLEM), ("s.md", b"x"), ("sub/evil.txt", b"pwn")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    real_mkdir = os.mkdir

    def racing_mkdir(path: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real_mkdir(path, mode, dir_fd=dir_fd)
        if path == "sub":  # the racer replaces the new folder with a link to the target
            os.rmdir(path, dir_fd=dir_fd)
            os.symlink(target, path, dir_fd=dir_fd)

    monkeypatch.setattr(_archive.os, "mkdir", racing_mkdir)
    with pytest.raises(OSError, match="sub"):
        extract_problem_archive(buffer.getvalue(), scratch)
    assert list(target.iterdir()) == []


def test_a_scratch_folder_that_is_not_empty_is_refused_before_writing(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "sub").symlink_to(tmp_path)
    data = deep_names(1, 3, "tar")
    with pytest.raises(ValueError, match="not empty"):
        extract_problem_archive(data, scratch)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scratch"]


class _Boom(Exception):
    pass


@pytest.mark.parametrize("failure", ["platform-fails", "platform-refuses", "write-fails"])
def test_the_scratch_folder_is_removed_whatever_fails_after_extraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    watched = tmp_path / "tmp"
    watched.mkdir()
    with Platform.open(Config(db=f"sqlite:///{tmp_path / 'a.db'}")) as platform:
        monkeypatch.setattr(tempfile, "tempdir", str(watched))
        expected: type[BaseException] = _Boom
        if failure == "platform-fails":

            def boom(*_: object) -> None:
                raise _Boom

            monkeypatch.setattr(platform, "publish", boom)
        elif failure == "platform-refuses":  # a refusal after extraction (a rule of publish's)

            def refuse(folder: Path, by: str) -> None:
                assert (folder / "problem.yaml").is_file()
                raise InvalidInput("refused by a rule of the platform's", where="--as")

            monkeypatch.setattr(platform, "publish", refuse)
            expected = InvalidInput
        else:
            real_write = _archive._write

            def failing(root: int, member: object) -> None:
                real_write(root, member)  # type: ignore[arg-type]
                raise _Boom

            monkeypatch.setattr(_archive, "_write", failing)
        with pytest.raises(expected):
            publish_archive(platform, deep_names(3, 4, "tar"), "mgr", ArchiveLimits())
        assert [p for p in watched.iterdir() if p.name.startswith("assay-archive-")] == []
        assert platform.ledger.find(kind="problem.published") == []
