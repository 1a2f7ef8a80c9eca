"""Publishing a problem folder that arrives as an uploaded archive (``.tar.gz`` or ``.zip``).

An archive is hostile input: a member can name ``../../etc/cron.d/x`` or ``/root/.ssh/...``, be
a symbolic or hard link to a host file, a device or a fifo, or decompress to gigabytes. So
nothing here uses ``tarfile.extract`` or ``zipfile.extract``. The whole listing is read and
checked first, against explicit caps (members, total bytes, depth, name length, compression
ratio) and name rules (relative, no ``..``, no backslash, no NUL or other control or format
characters, NFC, no two names that differ only by case or Unicode form); only regular files
and folders are accepted. Only when every member passes are the files written, by assay
itself, under a fresh, empty scratch folder (``O_EXCL | O_NOFOLLOW``, modes 0644/0755, never
set-id bits). Then the folder is published by the same ``Platform.publish`` that
``assay problem publish`` calls, and the scratch folder is removed whatever happened.

A refusal is one ``InvalidInput`` whose message names the member and what is wrong with it
(``archive: member '../x': ...``); nothing is written before it and nothing is published.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay._errors import InvalidInput

if TYPE_CHECKING:
    from assay.platform._platform import Platform
    from assay.platform._views import Published

WHERE = "archive"
PROBLEM_FILE = "problem.yaml"
CHUNK = 1024 * 1024
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Control, format (bidi overrides, zero-width joiners), surrogate, private-use, unassigned and
line/paragraph separators: characters that make a name display as something it is not."""


@dataclass(frozen=True)
class ArchiveLimits:
    """What an uploaded problem archive may hold. Every cap is checked before anything is
    written; the ratio cap applies once the content passes ``ratio_floor`` bytes (a tiny archive
    of small files compresses well without being a bomb)."""

    members: int = 2000
    """Members in the listing, and also files and folders written (the folders a member's
    name implies included)."""
    total_bytes: int = 64 * 1024 * 1024
    depth: int = 16
    name_chars: int = 1024
    part_bytes: int = 255
    ratio: int = 100
    ratio_floor: int = 1024 * 1024


@dataclass(frozen=True)
class _Member:
    """One checked member: its parts, whether a folder, its bytes and whether executable."""

    parts: tuple[str, ...]
    folder: bool
    data: bytes = b""
    executable: bool = False


def refuse(message: str) -> InvalidInput:
    """The one error of this module: the caller's archive, named."""
    return InvalidInput(message, where=WHERE)


def checked_name(raw: str, limits: ArchiveLimits) -> tuple[str, ...]:
    """The parts of a member name, or InvalidInput saying why it cannot be one.

    A leading ``./`` and a trailing ``/`` are allowed (tar and zip write them); ``.`` parts are
    dropped. Returns ``()`` for the archive's root itself (``./``)."""
    shown = repr(raw[:200])
    if len(raw) > limits.name_chars:
        raise refuse(f"member {shown}: a name longer than {limits.name_chars} characters")
    if "\x00" in raw:
        raise refuse(f"member {shown}: a NUL character in the name")
    if "\\" in raw:
        raise refuse(f"member {shown}: a backslash in the name (use '/' between folders)")
    if raw.startswith("/"):
        raise refuse(f"member {shown}: an absolute name (names must be relative)")
    parts = tuple(p for p in raw.split("/") if p not in ("", "."))
    if ".." in parts:
        raise refuse(f"member {shown}: '..' in the name (names must stay inside the archive)")
    if len(parts) > limits.depth:
        raise refuse(f"member {shown}: nested deeper than {limits.depth} folders")
    for part in parts:
        if len(part.encode("utf-8", "surrogatepass")) > limits.part_bytes:
            raise refuse(f"member {shown}: a name part longer than {limits.part_bytes} bytes")
        bad = [c for c in part if unicodedata.category(c) in _REFUSED_CATEGORIES]
        if bad:
            raise refuse(
                f"member {shown}: the character U+{ord(bad[0]):04X} in the name (control, "
                "format or unassigned characters are refused)"
            )
        if unicodedata.normalize("NFC", part) != part:
            raise refuse(f"member {shown}: a name not in Unicode NFC form")
    return parts


def _fold(parts: tuple[str, ...]) -> str:
    """The key two names collide under: case and Unicode compatibility forms folded."""
    return "/".join(unicodedata.normalize("NFKC", p).casefold() for p in parts)


# ---------------------------------------------------------------------------- reading


def _gunzip(data: bytes, limits: ArchiveLimits, cap: int) -> bytes:
    """The decompressed bytes of a gzip stream (several members allowed), refused as soon as
    they pass ``cap`` or the ratio bound."""
    bound = max(limits.ratio_floor, limits.ratio * len(data))
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        pending = rest
        while not inflater.eof:
            try:
                chunk = inflater.decompress(pending, CHUNK)
            except zlib.error:
                raise refuse("not a valid gzip stream") from None
            pending = inflater.unconsumed_tail
            out += chunk
            if len(out) > bound:
                raise refuse(
                    f"decompresses to more than {limits.ratio} times its size (a compression "
                    "bomb?); upload the folder less compressed"
                )
            if len(out) > cap:
                raise refuse(f"holds more than {limits.total_bytes} bytes")
            if not chunk and not pending:
                raise refuse("the gzip stream is cut short")
        rest = inflater.unused_data
        if rest and rest[:2] != b"\x1f\x8b":
            if rest.strip(b"\x00"):
                raise refuse("bytes after the end of the gzip stream")
            rest = b""
    return bytes(out)


_TAR_KINDS = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a fifo",
    tarfile.CONTTYPE: "a contiguous file",
    tarfile.GNUTYPE_SPARSE: "a sparse file",
}


def _tar_members(data: bytes, limits: ArchiveLimits) -> Iterator[_Member]:
    cap = limits.total_bytes + limits.members * 3 * tarfile.BLOCKSIZE + 20 * tarfile.BLOCKSIZE
    raw = _gunzip(data, limits, cap)
    try:
        archive = tarfile.open(fileobj=io.BytesIO(raw), mode="r:")  # noqa: SIM115 (closed below)
    except tarfile.TarError:
        raise refuse("the gzip stream does not hold a tar archive") from None
    count = 0
    total = 0
    with archive:
        while True:
            try:
                info = archive.next()
            except tarfile.TarError as exc:
                raise refuse(f"a damaged tar header after {count} members ({exc})") from None
            if info is None:
                return
            count += 1
            if count > limits.members:
                raise refuse(f"more than {limits.members} members")
            parts = checked_name(info.name, limits)
            kind = _TAR_KINDS.get(info.type)
            if kind is None and info.type not in (
                tarfile.REGTYPE,
                tarfile.AREGTYPE,
                tarfile.DIRTYPE,
            ):
                kind = f"a member of tar type {info.type!r}"
            if kind is not None:
                raise refuse(
                    f"member {info.name!r} is {kind}: only regular files and folders are accepted"
                )
            if info.type == tarfile.DIRTYPE:
                yield _Member(parts, folder=True)
                continue
            total += info.size
            if total > limits.total_bytes:
                raise refuse(f"holds more than {limits.total_bytes} bytes")
            handle = archive.extractfile(info)
            assert handle is not None  # a regular member always has a handle
            content = handle.read(info.size + 1)
            if len(content) != info.size:
                raise refuse(f"member {info.name!r} is cut short")
            yield _Member(parts, False, content, bool(info.mode & stat.S_IXUSR))


def _zip_members(data: bytes, limits: ArchiveLimits) -> Iterator[_Member]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        raise refuse("not a valid zip archive") from None
    bound = max(limits.ratio_floor, limits.ratio * len(data))
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.members:
            raise refuse(f"more than {limits.members} members")
        declared = sum(i.file_size for i in infos)
        if declared > limits.total_bytes:
            raise refuse(f"holds more than {limits.total_bytes} bytes")
        if declared > bound:
            raise refuse(
                f"decompresses to more than {limits.ratio} times its size (a compression bomb?); "
                "upload the folder less compressed"
            )
        total = 0
        for info in infos:
            name = info.orig_filename  # before zipfile cuts it at a NUL
            parts = checked_name(name, limits)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode) if info.create_system == 3 else 0
            if info.flag_bits & 0x1:
                raise refuse(f"member {name!r} is encrypted")
            folder = info.is_dir()
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR) or (kind == stat.S_IFDIR) != folder:
                what = "a symbolic link" if kind == stat.S_IFLNK else "not a regular file"
                raise refuse(
                    f"member {name!r} is {what}: only regular files and folders are accepted"
                )
            if folder:
                if info.file_size:
                    raise refuse(f"member {name!r} is a folder with content")
                yield _Member(parts, folder=True)
                continue
            try:
                with archive.open(info) as handle:
                    content = handle.read(info.file_size + 1)
            except (
                zipfile.BadZipFile,
                NotImplementedError,
                RuntimeError,
                ValueError,
                zlib.error,
                EOFError,
            ) as exc:
                raise refuse(f"member {name!r} cannot be read ({exc})") from None
            total += len(content)
            if len(content) != info.file_size or total > limits.total_bytes:
                raise refuse(f"member {name!r} does not hold the size its header declares")
            yield _Member(parts, False, content, bool(mode & stat.S_IXUSR))


def read_archive(data: bytes, limits: ArchiveLimits) -> list[_Member]:
    """Every member of a ``.tar.gz`` or ``.zip``, checked; InvalidInput on the first defect."""
    if data[:2] == b"\x1f\x8b":
        members = list(_tar_members(data, limits))
    elif data[:2] == b"PK":
        members = list(_zip_members(data, limits))
    else:
        raise refuse("not a .tar.gz or .zip archive (its first bytes say neither)")
    seen: dict[str, _Member] = {}
    for member in members:
        if not member.parts:
            continue
        key = _fold(member.parts)
        if key in seen:
            earlier = seen[key]
            if earlier.folder and member.folder and earlier.parts == member.parts:
                continue  # a folder listed twice (tar appends do this): harmless
            raise refuse(
                f"member {'/'.join(member.parts)!r} is given twice (or differs from "
                f"{'/'.join(earlier.parts)!r} only by case or Unicode form)"
            )
        seen[key] = member
    written = {m.parts for m in seen.values()} | {
        m.parts[:depth] for m in seen.values() for depth in range(1, len(m.parts))
    }
    if len(written) > limits.members:  # folders a name implies are written too
        raise refuse(
            f"makes more than {limits.members} files and folders (the folders on the way to "
            "a member count: a small archive of deep names would make tens of thousands)"
        )
    for member in seen.values():  # a file cannot also be a folder on the way to another member
        for depth in range(1, len(member.parts)):
            above = seen.get(_fold(member.parts[:depth]))
            if above is not None and not above.folder:
                raise refuse(
                    f"member {'/'.join(member.parts)!r} lies under "
                    f"{'/'.join(above.parts)!r}, which is a file"
                )
    return list(seen.values())


def _top(members: list[_Member]) -> tuple[str, ...]:
    """Where problem.yaml is: the archive's top, or inside its one top-level folder."""
    files = {m.parts for m in members if not m.folder}
    if (PROBLEM_FILE,) in files:
        return ()
    tops = {m.parts[0] for m in members} - {"__MACOSX"}  # what macOS's Finder adds
    if len(tops) == 1:
        (top,) = tops
        if (top, PROBLEM_FILE) in files:
            return (top,)
    raise refuse(f"holds no {PROBLEM_FILE} at its top or inside its one top-level folder")


# ---------------------------------------------------------------------------- writing


def extract_problem_archive(
    data: bytes, scratch: Path, limits: ArchiveLimits | None = None
) -> Path:
    """Check the archive, then write its members under ``scratch`` (an existing, empty folder
    that only the caller uses): the problem folder inside it. Nothing is written when any member
    is refused."""
    limits = limits or ArchiveLimits()
    members = read_archive(data, limits)
    top = _top(members)
    if any(scratch.iterdir()):
        raise ValueError(f"the scratch folder {scratch} is not empty")
    root = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for member in sorted(members, key=lambda m: (len(m.parts), m.parts)):
            _write(root, member)
    finally:
        os.close(root)
    return scratch.joinpath(*top)


def _write(root: int, member: _Member) -> None:
    """Write one member relative to the scratch folder's descriptor, never following a link
    (there can be none: only this function writes there, and it makes no links)."""
    parent = os.dup(root)
    try:
        for part in member.parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=parent)
            below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
            os.close(parent)
            parent = below
        last = member.parts[-1]
        if member.folder:
            with contextlib.suppress(FileExistsError):
                os.mkdir(last, 0o755, dir_fd=parent)
            return
        mode = 0o755 if member.executable else 0o644
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(last, flags, mode, dir_fd=parent)
        with os.fdopen(fd, "wb") as out:
            out.write(member.data)
    finally:
        os.close(parent)


def publish_archive(
    platform: Platform,
    data: bytes,
    by: str,
    limits: ArchiveLimits | None = None,
) -> Published:
    """Publish the problem folder an archive holds, as ``by``: extracted into a fresh scratch
    folder (removed afterwards), then ``platform.publish`` exactly as for a folder on disk."""
    with tempfile.TemporaryDirectory(prefix="assay-archive-") as scratch:
        folder = extract_problem_archive(data, Path(scratch), limits)
        return platform.publish(folder, by)
