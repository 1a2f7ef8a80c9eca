"""Hostile problem archives (``assay.platform.extract_problem_archive``, the web's publish from
an upload): zip-slip, absolute names, symbolic and hard links, devices and fifos, compression
bombs by ratio and by member count, names given twice or differing only by case or Unicode
form, NUL, backslashes, bidi and zero-width characters, undecodable bytes, depth, and damaged
streams. Each archive also holds a valid problem folder, written *before* the hostile member,
so a reader that extracted as it went would already have written something.

Every one is refused with one ``archive: ...`` line naming what is wrong; the scratch folder is
left empty, nothing appears outside it (the escape targets are checked by name), and
publishing it records nothing in the ledger. A control archive built the same way publishes.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import tarfile
import tempfile
import uuid
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay import Config
from assay._errors import InvalidInput
from assay.platform import ArchiveLimits, Platform, extract_problem_archive, publish_archive
from assay.service import Settings, create_app

PROBLEM = json.dumps({"id": "arc", "title": "An archived problem", "statement": "statement.md"})
VALID = [("problem.yaml", PROBLEM.encode()), ("statement.md", b"Solve it.\n")]
OUTSIDE = "/tmp/assay-archive-escape-" + uuid.uuid4().hex
"""An absolute path no archive may reach (checked absent after every case)."""


# ---------------------------------------------------------------------------- builders


def _regular(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.devmajor, info.devminor = 1, 3
    return info, b""


def tar_gz(*extra: tuple[tarfile.TarInfo, bytes], valid: bool = True) -> bytes:
    """A PAX tar (gzip) of the valid problem files, then ``extra`` members."""
    buffer = io.BytesIO()
    members = [_regular(n, d) for n, d in VALID] if valid else []
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in [*members, *extra]:
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(buffer.getvalue(), compresslevel=6)


def zip_of(*extra: tuple[str | zipfile.ZipInfo, bytes], valid: bool = True) -> bytes:
    """A zip of the valid problem files, then ``extra`` members (a ZipInfo keeps its fields)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name, and writes it
        for name, data in [*(VALID if valid else []), *extra]:
            archive.writestr(name, data)
    return buffer.getvalue()


def zip_info(name: str, mode: int = 0, raw_name: str | None = None) -> zipfile.ZipInfo:
    """A zip member made on unix with ``mode`` (its type bits too); ``raw_name`` replaces the
    name after construction (ZipInfo cuts a name at NUL, but writes what it holds)."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    if raw_name is not None:
        info.filename = raw_name
    return info


def many_tar(count: int) -> bytes:
    return tar_gz(*(_regular(f"d/f{i}", b"x") for i in range(count)))


def many_zip(count: int) -> bytes:
    return zip_of(*((f"d/f{i}", b"x") for i in range(count)))


@dataclass
class Case:
    build: Callable[[], bytes]
    refusal: str
    """A fragment of the one-line refusal."""
    escapes: list[str] = field(default_factory=list)
    """Paths, relative to the test's folder or absolute, that must not exist afterwards."""
    limits: ArchiveLimits | None = None


CASES: dict[str, Case] = {
    # --- traversal
    "tar zip-slip ../": Case(
        lambda: tar_gz(_regular("../escaped.txt", b"pwned")), "'..' in the name", ["escaped.txt"]
    ),
    "tar zip-slip inside a folder": Case(
        lambda: tar_gz(_regular("a/../../escaped.txt", b"pwned")),
        "'..' in the name",
        ["escaped.txt"],
    ),
    "tar absolute name": Case(
        lambda: tar_gz(_regular(OUTSIDE + "/pwned", b"pwned")), "an absolute name", [OUTSIDE]
    ),
    "tar PAX path with ..": Case(
        lambda: tar_gz(_pax("innocent.txt", "../../escaped.txt")),
        "'..' in the name",
        ["../escaped.txt"],
    ),
    "zip zip-slip ../": Case(
        lambda: zip_of(("../escaped.txt", b"pwned")), "'..' in the name", ["escaped.txt"]
    ),
    "zip absolute name": Case(
        lambda: zip_of((OUTSIDE + "/pwned", b"pwned")), "an absolute name", [OUTSIDE]
    ),
    # --- links, devices, fifos
    "tar symlink out": Case(
        lambda: tar_gz(_special("ln", tarfile.SYMTYPE, "../outside")),
        "a symbolic link",
        ["outside/pwned"],
    ),
    "tar symlink then a file through it": Case(
        lambda: tar_gz(_special("ln", tarfile.SYMTYPE, "/tmp"), _regular("ln/pwned", b"x")),
        "a symbolic link",
        ["/tmp/pwned-" + uuid.uuid4().hex],
    ),
    "tar hard link to a host file": Case(
        lambda: tar_gz(_special("hl", tarfile.LNKTYPE, "/etc/passwd")), "a hard link"
    ),
    "tar hard link to a member": Case(
        lambda: tar_gz(_special("hl", tarfile.LNKTYPE, "statement.md")), "a hard link"
    ),
    "tar character device": Case(
        lambda: tar_gz(_special("null", tarfile.CHRTYPE)), "a character device"
    ),
    "tar block device": Case(lambda: tar_gz(_special("sda", tarfile.BLKTYPE)), "a block device"),
    "tar fifo": Case(lambda: tar_gz(_special("pipe", tarfile.FIFOTYPE)), "a fifo"),
    "zip symlink": Case(
        lambda: zip_of((zip_info("ln", stat.S_IFLNK | 0o777), b"/etc/passwd")),
        "a symbolic link",
    ),
    "zip character device": Case(
        lambda: zip_of((zip_info("null", stat.S_IFCHR | 0o666), b"")), "not a regular file"
    ),
    "zip fifo": Case(
        lambda: zip_of((zip_info("pipe", stat.S_IFIFO | 0o666), b"")), "not a regular file"
    ),
    # --- bombs
    "tar.gz ratio bomb": Case(
        lambda: tar_gz(_regular("zeros.bin", bytes(40 * 1024 * 1024))), "times its size"
    ),
    "zip ratio bomb": Case(
        lambda: zip_of(("zeros.bin", bytes(40 * 1024 * 1024))), "times its size"
    ),
    "tar member-count bomb": Case(lambda: many_tar(2100), "more than 2000 members"),
    "zip member-count bomb": Case(lambda: many_zip(2100), "more than 2000 members"),
    "tar past the total size": Case(
        lambda: tar_gz(_regular("big.bin", os.urandom(5000))),
        "holds more than 4000 bytes",
        limits=ArchiveLimits(total_bytes=4000),
    ),
    "zip past the total size": Case(
        lambda: zip_of(("big.bin", os.urandom(5000))),
        "holds more than 4000 bytes",
        limits=ArchiveLimits(total_bytes=4000),
    ),
    "tar nested too deep": Case(
        lambda: tar_gz(_regular("d/" * 20 + "deep.txt", b"x")), "nested deeper than 16"
    ),
    "tar name too long": Case(lambda: tar_gz(_regular("n" * 300, b"x")), "longer than 255 bytes"),
    # --- names given twice
    "tar problem.yaml twice": Case(
        lambda: tar_gz(_regular("problem.yaml", b"id: other")), "given twice"
    ),
    "tar names differing by case": Case(
        lambda: tar_gz(_regular("Statement.md", b"other")), "only by case or Unicode form"
    ),
    "tar names differing by compatibility form": Case(
        lambda: tar_gz(_regular("\uff53tatement.md", b"other")), "only by case or Unicode form"
    ),
    "zip problem.yaml twice": Case(lambda: zip_of(("problem.yaml", b"id: other")), "given twice"),
    "tar a file under a file": Case(
        lambda: tar_gz(_regular("statement.md/inner", b"x")), "which is a file"
    ),
    # --- characters in names
    "tar NUL in a PAX path": Case(
        lambda: tar_gz(_pax("ok.txt", "ok.txt\x00/../../escaped.txt")),
        "a NUL character",
        ["../escaped.txt"],
    ),
    "zip NUL in the name": Case(
        lambda: zip_of((zip_info("x", raw_name="statement.md\x00../../escaped.txt"), b"x")),
        "a NUL character",
        ["../escaped.txt"],
    ),
    "tar backslash traversal": Case(
        lambda: tar_gz(_regular("..\\..\\escaped.txt", b"x")), "a backslash"
    ),
    "zip backslash traversal": Case(lambda: zip_of(("..\\escaped.txt", b"x")), "a backslash"),
    "tar bidi override": Case(lambda: tar_gz(_regular("\u202etxt.exe", b"x")), "U+202E"),
    "tar zero-width space": Case(lambda: tar_gz(_regular("stat\u200bement.md", b"x")), "U+200B"),
    "tar NFD name": Case(lambda: tar_gz(_regular("e\u0301.txt", b"x")), "not in Unicode NFC"),
    "tar undecodable bytes": Case(lambda: tar_gz(_regular("\udcff.txt", b"x")), "U+DCFF"),
    "tar newline in a name": Case(lambda: tar_gz(_regular("a\nb.txt", b"x")), "U+000A"),
    # --- not an archive, or a damaged one
    "plain text": Case(lambda: b"id: arc\n", "not a .tar.gz or .zip"),
    "a tar.bz2": Case(lambda: b"BZh91AY&SY" + bytes(64), "not a .tar.gz or .zip"),
    "gzip cut short": Case(lambda: tar_gz()[:-40], "cut short"),
    "gzip with trailing bytes": Case(lambda: tar_gz() + b"trailing", "after the end"),
    "gzip of something not a tar": Case(
        lambda: gzip.compress(b"not a tar at all" * 100), "does not hold a tar"
    ),
    "zip cut short": Case(lambda: zip_of()[:-30], "not a valid zip"),
    "no problem.yaml": Case(
        lambda: tar_gz(_regular("a/statement.md", b"x"), _regular("b/x", b"y"), valid=False),
        "holds no problem.yaml",
    ),
}


def _pax(name: str, path: str) -> tuple[tarfile.TarInfo, bytes]:
    """A member whose ustar name is harmless and whose PAX ``path`` (what readers use) is not."""
    info, data = _regular(name, b"pwned")
    info.pax_headers = {"path": path}
    return info, data


# ---------------------------------------------------------------------------- checks


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    folder = tmp_path_factory.mktemp("ledger")
    with Platform.open(Config(db=f"sqlite:///{folder / 'assay.db'}")) as opened:
        yield opened


def test_the_control_archives_extract_and_publish(tmp_path: Path, platform: Platform) -> None:
    """Built by the same helpers without the hostile member, both formats work: the refusals
    below are about the member, not the builders."""
    for data in (tar_gz(_regular("sub/notes.txt", b"n")), zip_of(("sub/notes.txt", b"n"))):
        scratch = tmp_path / uuid.uuid4().hex
        scratch.mkdir()
        folder = extract_problem_archive(data, scratch)
        assert tree(folder) == {"problem.yaml", "statement.md", "sub", "sub/notes.txt"}
        assert (folder / "statement.md").read_bytes() == b"Solve it.\n"
    finder = zip_of(  # one top-level folder, plus what macOS's Finder adds beside it
        *((f"arc/{n}", d) for n, d in VALID), ("__MACOSX/arc/._statement.md", b"\0"), valid=False
    )
    scratch = tmp_path / "finder"
    scratch.mkdir()
    assert extract_problem_archive(finder, scratch) == scratch / "arc"
    published = publish_archive(platform, tar_gz(), "mgr")
    assert published.problem == "arc" and published.new
    again = publish_archive(platform, zip_of(), "mgr")
    assert again.revision == published.revision and not again.new


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_archive_is_refused_and_writes_nothing(
    name: str, tmp_path: Path, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    data = case.build()
    work = tmp_path / "work"
    scratch = work / "scratch"
    scratch.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    before = tree(tmp_path)

    with pytest.raises(InvalidInput) as refused:
        extract_problem_archive(data, scratch, case.limits)
    message = str(refused.value)
    assert message.startswith("archive: ") and case.refusal in message, message
    assert "\n" not in message
    assert not any(scratch.iterdir()), "something was written before the refusal"
    assert tree(tmp_path) == before, tree(tmp_path) ^ before

    # publishing it: the same refusal, nothing in the ledger, the scratch folder gone
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    rows = len(platform.ledger.find())
    with pytest.raises(InvalidInput) as again:
        publish_archive(platform, data, "mgr2", case.limits)
    assert str(again.value) == message
    assert len(platform.ledger.find()) == rows
    assert not any(temp.iterdir())

    for escape in case.escapes:
        target = Path(escape) if escape.startswith("/") else work / escape
        assert not target.exists(), target


HTTP_CASES = ["tar zip-slip ../", "tar symlink then a file through it", "zip NUL in the name"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, Config]]:
    """The service's app over a fresh store, and a manager's token."""
    config = Config(db=f"sqlite:///{tmp_path_factory.mktemp('web') / 'assay.db'}")
    with Platform.open(config) as opened:
        token = opened.reviews.add_user("mgr", [], "admin", ["manager"]).token
    app = create_app(Settings(config=config))
    with TestClient(app) as client:
        yield client, token or "", config
    app.state.web.close()


@pytest.mark.parametrize("name", HTTP_CASES)
def test_a_hostile_upload_to_the_api_is_a_422_and_publishes_nothing(
    name: str, served: tuple[TestClient, str, Config]
) -> None:
    client, token, config = served
    answer = client.post(
        "/v1/problems",
        headers={"Authorization": f"Bearer {token}"},
        files={"archive": ("p", CASES[name].build())},
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("archive: member ")
    assert CASES[name].refusal in answer.json()["detail"]
    with Platform.open(config) as opened:
        assert opened.ledger.find(kind="problem.published") == []
