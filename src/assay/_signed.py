"""Signed caches: entries only this verifier could have written, under keys that cannot collide.

A cache entry is a claim assay acts on later without recomputing it ("these exact bytes were
judged green", "this checker reproduced its fixtures"), so no entry is believed unless it is
signed with HMAC-SHA256 under a secret that only the verifier holds: 32 random bytes created once
in the configured key file (:meth:`assay.Config.signing_key_file`: ``ASSAY_KEY_FILE``, default
``$XDG_CONFIG_HOME/assay/cache.key``, that is ``~/.config/assay/cache.key``), mode 0600,
created atomically (written to a private temporary file, then hard-linked into place, which fails
if another process got there first, like ``O_EXCL``). A key file that is not a regular file owned
by the verifier's uid with no group or other access, or a key folder that the verifier does not
own or that others can write, is refused (:class:`UnsafeCache`), never used.

The cache folder must be private to the verifier: owned by its uid, writable by no one else
(assay makes it 0700). Every step goes through folder descriptors opened with
``O_DIRECTORY|O_NOFOLLOW`` (``openat``-style), so a symlink planted anywhere below the configured
folder is never followed, nothing is ever chmod-ed by path, and a folder that is not private is
refused: the store then caches nothing (a warning is logged and :attr:`SignedStore.refused` says
why), which costs time, never a verdict.

What the signature does and does not establish: an entry was written by a process that held the
key. It stops forgery, not replay: a process that can write the cache folder can put back an
entry assay removed (a revoked conformance) or an older one. That is why the folder must be
private. Sandboxed code runs as uid 65534 with neither the cache nor the key mounted, so it can
reach neither. A process running *outside* the sandbox as the verifier's own uid can read the
key, replay entries (and could ptrace the verifier itself); keep agents under another uid.

Keys are the sha256 of one canonical encoding (:func:`canonical_digest`: JSON, sorted keys,
lists kept as lists), so no two different component sets share a key; both caches' keys include
:func:`judging_code`, so a verdict stored by another assay (another release, a patched reading
of a run) is never served.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay._config import DEFAULT_CONFIG
from assay._errors import InvalidInput

KEY_BYTES = 32
ENTRY_LIMIT = 8 * 1024 * 1024
"""Largest entry read back; anything larger is not an entry assay wrote."""
MAGIC = b"assay.signed/1\n"
_HEX_KEY = re.compile(r"^[0-9a-f]{64}$")
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_log = logging.getLogger("assay.cache")

JUDGING_CODE = ("proofs", "sandbox", "checks/_kinds/_program.py", "checks/_kinds/_proofs.py")
"""What decides verdicts, relative to the ``assay`` package: its source is in every cache key."""


class UnsafeCache(InvalidInput):
    """A cache key or cache folder that someone other than the verifier could have written."""


def canonical_json(document: Any) -> str:
    """The one canonical JSON encoding (sorted keys, no spaces, ASCII, lists kept as lists; NaN
    and infinity refused with ValueError): equal documents give equal text."""
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def canonical_digest(document: Any) -> str:
    """sha256 of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(document).encode("ascii")).hexdigest()


@functools.cache
def judging_code() -> str:
    """assay's version and a sha256 of the source that decides verdicts (computed once).

    It names the proof judges and readers, the sandbox and checker protocol, the conformance
    gate and the program and proof kinds (plus the strict JSON reader, the wire models that
    store a verdict, and this module): a fix to
    any of them makes every cached verdict and conformance a miss. Correctness beats hit rate.
    """
    from assay._version import __version__

    package = Path(__file__).resolve().parent
    files: list[Path] = [package / "_signed.py", package / "_strict.py", package / "_wire.py"]
    for part in JUDGING_CODE:
        path = package / part
        if path.is_dir():
            files += [p for p in path.rglob("*") if p.suffix in (".py", ".json") and p.is_file()]
        else:
            files.append(path)
    digest = hashlib.sha256()
    for path in sorted(set(files)):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{__version__}/{digest.hexdigest()}"


def _open_child(dir_fd: int, name: str, create: bool, where: Path) -> int:
    """Open (and create, 0700) the folder ``name`` under ``dir_fd`` without following a link;
    UnsafeCache unless the verifier owns it and no one else can write it (it is made 0700);
    FileNotFoundError when absent and not ``create``."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=dir_fd)
    try:
        fd = os.open(name, _FOLDER, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UnsafeCache(
            f"is not a folder that can be opened without following a link ({exc.strerror})",
            where=str(where),
        ) from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise UnsafeCache(
                f"is owned by uid {info.st_uid}, not by the verifier (uid {os.geteuid()}): "
                "a cache folder must be private",
                where=str(where),
            )
        if info.st_mode & 0o022:
            raise UnsafeCache(
                "can be written by others: a cache folder must be private (0700)",
                where=str(where),
            )
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_folder(path: Path, create: bool) -> int:
    """A descriptor on ``path``: its parents as configured, ``path`` itself checked private."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return _open_child(parent, path.name, create, path)
    finally:
        os.close(parent)


def load_key(path: Path) -> bytes:
    """The verifier's secret, created once if absent; UnsafeCache when the file is unsafe."""
    folder = open_folder(path.parent, create=True)
    try:
        try:
            return _read_key(folder, path)
        except FileNotFoundError:
            pass
        temporary = f".cache.key.{secrets.token_hex(8)}"
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder
        )
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(KEY_BYTES).hex().encode() + b"\n")
            with contextlib.suppress(FileExistsError):  # atomic create-if-absent: first key wins
                os.link(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            os.unlink(temporary, dir_fd=folder)
        return _read_key(folder, path)
    finally:
        os.close(folder)


def _read_key(folder: int, path: Path) -> bytes:
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UnsafeCache(
            f"the cache key cannot be opened safely ({exc.strerror})", where=str(path)
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeCache("the cache key must be a regular file", where=str(path))
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise UnsafeCache(
                "the cache key must be owned by the verifier's user with mode 0600",
                where=str(path),
            )
        text = os.read(fd, 256).decode("ascii", errors="replace").strip()
    finally:
        os.close(fd)
    if not _HEX_KEY.fullmatch(text):
        raise UnsafeCache(
            f"the cache key must be {KEY_BYTES} bytes in hex; delete it to make a new one",
            where=str(path),
        )
    return bytes.fromhex(text)


class SignedStore:
    """A private folder of signed JSON entries in one namespace, addressed by sha256 hex keys.

    Entries live at ``folder/[section/]kk/KEY.json``; ``folder``, ``section`` and ``kk`` are each
    opened without following links and must be private (see the module docstring), else the store
    caches nothing and :attr:`refused` says why.
    """

    def __init__(
        self,
        folder: Path,
        namespace: str,
        key_file: Path | None = None,
        *,
        section: str | None = None,
    ) -> None:
        self.folder = folder
        self.namespace = namespace
        self.key_file = key_file or DEFAULT_CONFIG.signing_key_file()
        self.section = section
        self.refused: str | None = None
        """Why the folder was last refused (nothing is read or written), or None."""
        self._secret: bytes | None = None

    def _mac(self, key: str, payload: bytes) -> bytes:
        if self._secret is None:
            self._secret = load_key(self.key_file)
        message = b"\0".join((self.namespace.encode(), key.encode(), payload))
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest().encode()

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives (a key that is not 64 hex digits is refused: it names a file)."""
        if not _HEX_KEY.fullmatch(key):
            raise ValueError(f"a cache key is 64 lower-case hex digits, not {key!r}")
        top = self.folder / self.section if self.section else self.folder
        return top / key[:2] / f"{key}.json"

    @contextlib.contextmanager
    def _bucket(self, key: str, create: bool) -> Iterator[int | None]:
        """A descriptor on the ``kk/`` folder of ``key``; None when absent or refused."""
        opened: list[int] = []
        try:
            try:
                opened.append(open_folder(self.folder, create))
                where = self.folder
                for name in (self.section, key[:2]):
                    if name:
                        where = where / name
                        opened.append(_open_child(opened[-1], name, create, where))
            except FileNotFoundError:
                yield None
                return
            except UnsafeCache as exc:
                self._refuse(str(exc))
                yield None
                return
            self.refused = None
            yield opened[-1]
        finally:
            for fd in opened:
                os.close(fd)

    def _refuse(self, reason: str) -> None:
        if self.refused != reason:
            _log.warning("assay: not using the %s cache: %s", self.namespace, reason)
        self.refused = reason

    def get(self, key: str) -> Any | None:
        """The payload stored under ``key``, or None (a bad entry is removed, never returned)."""
        self.path(key)
        with self._bucket(key, create=False) as bucket:
            if bucket is None:
                return None
            try:
                raw = _read_entry(bucket, f"{key}.json")
            except FileNotFoundError:
                return None
            except OSError:
                raw = None  # a symlink, a FIFO, unreadable: not an entry assay wrote
            if raw is not None:
                mac, _, payload = raw[len(MAGIC) :].partition(b"\n")
                if raw.startswith(MAGIC) and hmac.compare_digest(mac, self._mac(key, payload)):
                    try:
                        return json.loads(payload)
                    except ValueError:
                        pass
            with contextlib.suppress(OSError):
                os.unlink(f"{key}.json", dir_fd=bucket)
        return None

    def put(self, key: str, payload: Any) -> None:
        """Store ``payload`` signed, written to a temporary file and renamed, so a reader sees a whole entry or none; when the folder is refused, nothing is stored."""
        data = json.dumps(payload, sort_keys=True, allow_nan=False).encode()
        self.path(key)
        signed = MAGIC + self._mac(key, data) + b"\n" + data
        with self._bucket(key, create=True) as bucket:
            if bucket is None:
                return
            temporary = f".{key}.{secrets.token_hex(8)}.tmp"
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=bucket,
            )
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(signed)
                os.replace(temporary, f"{key}.json", src_dir_fd=bucket, dst_dir_fd=bucket)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=bucket)
                raise

    def remove(self, key: str) -> None:
        """Forget the entry for ``key``, if there is one."""
        self.path(key)
        with self._bucket(key, create=False) as bucket:
            if bucket is not None:
                with contextlib.suppress(OSError):
                    os.unlink(f"{key}.json", dir_fd=bucket)


def _read_entry(folder: int, name: str) -> bytes | None:
    """The entry's bytes; None when it is not a regular file or is too large to be one of ours."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > ENTRY_LIMIT:
                return None
    finally:
        os.close(fd)
    return b"".join(chunks)
