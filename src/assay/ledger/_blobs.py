"""The blob store: bytes kept by their sha256, in a private folder beside the history.

Layout: ``<root>/<sha[:2]>/<sha>``, files 0600, folders 0700 (owned by the verifier; the bytes
of sealed references live here). A blob is written to a private temporary file in the store,
then linked into place, so a reader never sees half a blob; ``read`` hashes what it reads and
refuses bytes that no longer match their name (``LedgerError``), so a blob corrupted or edited
on disk is never served.

Durability matches the SQLite store's (``synchronous=NORMAL``): a blob survives the writing
process being killed; it is not fsynced, so an OS crash or power loss can lose the latest
blobs (a later ``read`` then says ``BlobMissing`` or corrupt, never returns other bytes). An
fsync per blob would cost more than recording a whole run.

A folder is stored as its files (each a blob) plus a manifest blob, the canonical JSON
``{"tree": [[relpath, sha256, size, executable], ...]}`` sorted by path; the tree's id is the
manifest's sha256. Folders are copied through ``assay.sandbox.snapshot`` first (descriptors,
``O_NOFOLLOW``, capped by what is read), then stored from that private copy: a symbolic link
anywhere in it is refused; sockets, FIFOs and devices are left out, as the sandbox leaves them
out when it stages the same folder; empty folders are not kept.

Content addressing shares bytes: two artifacts with equal bytes are one blob, so ``delete``
removes those bytes for every entry that names them. The platform decides when that is right.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Collection
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay._errors import InvalidInput
from assay._signed import canonical_json
from assay._strict import loads_strict
from assay.ledger._errors import BlobMissing, LedgerError
from assay.sandbox import snapshot

_SHA = re.compile(r"^[0-9a-f]{64}$")
MANIFEST_LIMIT = 64 * 1024 * 1024
"""Largest manifest read back (about half a million files)."""


class Blob(BaseModel):
    """A stored blob (or tree): its sha256 and its size in bytes (a tree's: all its files)."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    size: int


class BlobStore:
    """A content-addressed folder (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._made: set[str] = set()
        """Folders this store has made or seen (``""``: the root), so a put skips the mkdir."""

    # --- writing -------------------------------------------------------------------------

    def put_bytes(self, data: bytes) -> Blob:
        """Store ``data``; storing the same bytes again is a no-op with the same Blob."""
        sha = hashlib.sha256(data).hexdigest()
        target = self._path(sha)
        if not target.exists():
            fd, temporary = self._temporary()
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                self._install(Path(temporary), target)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)
                raise
        return Blob(sha256=sha, size=len(data))

    def put_file(self, path: Path, max_bytes: int) -> Blob:
        """Store the regular file at ``path`` (not a link, device or FIFO), at most
        ``max_bytes``; InvalidInput naming the path otherwise."""
        try:
            info = os.lstat(path)
        except OSError as exc:
            raise InvalidInput(f"cannot read: {exc.strerror}", where=str(path)) from None
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInput(
                "is not a regular file (links, folders, devices and FIFOs are refused)",
                where=str(path),
            )
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise InvalidInput(f"cannot read: {exc.strerror}", where=str(path)) from None
        with os.fdopen(fd, "rb") as source:
            if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
                raise InvalidInput("changed into something that is not a file", where=str(path))
            data = source.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise InvalidInput(f"is larger than {max_bytes} bytes (its cap)", where=str(path))
        return self.put_bytes(data)

    def put_tree(self, folder: Path, max_bytes: int) -> Blob:
        """Store every file under ``folder`` (at most ``max_bytes`` in all) and its manifest.

        InvalidInput naming the path when ``folder`` is not a folder, holds a symbolic link, or
        is larger than ``max_bytes`` (``StagingTooLarge``, an InvalidInput)."""
        if not stat.S_ISDIR(_lstat_mode(folder)):
            raise InvalidInput("is not a folder", where=str(folder))
        scratch = Path(tempfile.mkdtemp(prefix=".tree-", dir=self._ensure_root()))
        try:
            copy = scratch / "t"
            snapshot(folder, copy, max_bytes, links=True)
            listing: list[list[Any]] = []
            total = 0
            for path in sorted(copy.rglob("*"), key=lambda p: p.relative_to(copy).as_posix()):
                relative = path.relative_to(copy).as_posix()
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    raise InvalidInput(
                        "is a symbolic link; a stored folder holds files and folders only",
                        where=str(folder / relative),
                    )
                if stat.S_ISREG(mode):
                    blob = self.put_bytes(path.read_bytes())
                    executable = bool(mode & stat.S_IXUSR)
                    listing.append([relative, blob.sha256, blob.size, executable])
                    total += blob.size
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        manifest = self.put_bytes(canonical_json({"tree": listing}).encode("ascii"))
        return Blob(sha256=manifest.sha256, size=total)

    # --- reading -------------------------------------------------------------------------

    def has(self, sha: str) -> bool:
        """Whether a blob with this hash is stored (its bytes are not checked here)."""
        return self._path(sha).is_file()

    def read(self, sha: str) -> bytes:
        """The blob's bytes, checked against its hash: BlobMissing when absent, LedgerError
        when the file no longer matches its name."""
        try:
            fd = os.open(self._path(sha), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise BlobMissing(sha) from None
        except OSError as exc:
            raise LedgerError(f"blob {sha} cannot be read: {exc.strerror}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise LedgerError(f"blob {sha} is corrupt: it is not a regular file")
        with os.fdopen(fd, "rb") as source:
            data = source.read()
        if hashlib.sha256(data).hexdigest() != sha:
            raise LedgerError(f"blob {sha} is corrupt: its bytes do not match its hash")
        return data

    def audit(self) -> tuple[int, str | None]:
        """Hash every stored blob against its name: (blobs checked, the first that fails, or
        None). Reads are checked anyway; this is for ``ledger verify``, which must not call a
        store intact while bytes in it were edited."""
        checked = 0
        if not self.root.is_dir():
            return 0, None
        for bucket in sorted(self.root.iterdir()):
            if len(bucket.name) != 2 or not bucket.is_dir():
                continue  # a writer's private temporary folder
            for path in sorted(bucket.iterdir()):
                if not _SHA.match(path.name):
                    continue
                checked += 1
                if _digest_of(path) != path.name:
                    return checked, path.name
        return checked, None

    def manifest(self, sha: str) -> list[tuple[str, str, int, bool]]:
        """A tree's files: (relative path, sha256, size, executable), checked to be safe paths."""
        raw = self.read(sha)
        if len(raw) > MANIFEST_LIMIT:
            raise LedgerError(f"blob {sha} is not a tree manifest (too large)")
        try:
            listing = loads_strict(raw)["tree"]
            files = [(str(p), str(h), int(n), bool(x)) for p, h, n, x in listing]
        except (InvalidInput, KeyError, TypeError, ValueError):
            raise LedgerError(f"blob {sha} is not a tree manifest") from None
        for relative, blob, _, _ in files:
            parts = PurePosixPath(relative).parts
            if not parts or relative.startswith("/") or ".." in parts or not _SHA.match(blob):
                raise LedgerError(f"tree {sha} names an unsafe path {relative!r}")
        return files

    def materialize(self, sha: str, dest: Path, *, tree: bool) -> None:
        """Write the blob to the file ``dest``, or the tree into the folder ``dest`` (created;
        it must not exist). Files are 0644 (0755 when executable), folders 0755; each file's
        bytes are checked against its hash."""
        if not tree:
            _write_new(dest, self.read(sha), executable=False)
            return
        files = self.manifest(sha)
        dest.mkdir(mode=0o755)
        for relative, blob, _, executable in files:
            target = dest / relative
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            _write_new(target, self.read(blob), executable=executable)

    # --- withdrawal ----------------------------------------------------------------------

    def delete(self, sha: str, *, tree: bool, keep: Collection[str] = ()) -> None:
        """Delete the blob (a tree: its files and its manifest), except the hashes in ``keep``
        (bytes something else still names: content is stored once). Idempotent: deleting what
        is gone is not an error."""
        if tree:
            with contextlib.suppress(BlobMissing):
                for _, blob, _, _ in self.manifest(sha):
                    if blob not in keep:
                        with contextlib.suppress(FileNotFoundError):
                            self._path(blob).unlink()
        if sha not in keep:
            with contextlib.suppress(FileNotFoundError):
                self._path(sha).unlink()

    # --- the folder ----------------------------------------------------------------------

    def _path(self, sha: str) -> Path:
        if not _SHA.match(sha):
            raise InvalidInput("is not a sha256 (64 lowercase hex digits)", where=repr(sha))
        return self.root / sha[:2] / sha

    def _ensure_root(self) -> Path:
        if not self._made:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            if stat.S_IMODE(self.root.stat().st_mode) != 0o700:
                os.chmod(self.root, 0o700)
            self._made.add("")
        return self.root

    def _temporary(self) -> tuple[int, str]:
        return tempfile.mkstemp(prefix=".blob-", dir=self._ensure_root())  # 0600

    def _install(self, temporary: Path, target: Path) -> None:
        """Rename the finished temporary file into place: atomic, and harmless when another
        process installed the same blob first (the bytes are the same by construction)."""
        folder = target.parent.name
        if folder not in self._made:
            target.parent.mkdir(mode=0o700, exist_ok=True)
            self._made.add(folder)
        try:
            os.rename(temporary, target)
        except OSError as exc:
            raise LedgerError(f"blob {target.name} cannot be stored: {exc.strerror}") from None


def _lstat_mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror}", where=str(path)) from None


def _write_new(path: Path, data: bytes, *, executable: bool) -> None:
    mode = 0o755 if executable else 0o644
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        os.fchmod(out.fileno(), mode)


def _digest_of(path: Path) -> str | None:
    """The sha256 of a regular file's bytes; None for anything else (a link, a folder) or what
    cannot be read: never a blob."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as source:
        digest = hashlib.sha256()
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
