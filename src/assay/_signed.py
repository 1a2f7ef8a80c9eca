"""Signed caches: entries only this verifier could have written, under keys that cannot collide.

A cache entry is a claim assay acts on later without recomputing it ("these exact bytes were
judged green", "this checker reproduced its fixtures"), so the folder holding it must not be a
trust root. Every entry is signed with HMAC-SHA256 under a secret that only the verifier holds:
32 random bytes created once in ``$XDG_CONFIG_HOME/assay/cache.key`` (default
``~/.config/assay/cache.key``), mode 0600, created atomically (written to a private temporary
file, then hard-linked into place, which fails if another process got there first, like
``O_EXCL``). A key file that is not a regular file owned by the verifier's uid with no group or
other access is refused (``InvalidInput``), never used.

On read, an entry with a missing or wrong signature, or signed for another namespace or key, is a
miss and is removed: never a verdict. Writes are atomic (temporary file, then rename) into
folders of mode 0700.

What the signature does and does not establish: an entry was written by a process that held the
key. Sandboxed code runs as uid 65534 with neither the cache nor the key mounted, so it can
reach neither. A process running *outside* the sandbox as the verifier's own uid can read the
key (and could ptrace the verifier itself); keep agents under another uid. The signature makes
the cache folder safe to share or to place where others can write, and makes a planted or
corrupted entry a miss instead of a verdict.

Keys are the sha256 of one canonical encoding (:func:`canonical_digest`: JSON, sorted keys,
lists kept as lists), so no two different component sets share a key.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import tempfile
from pathlib import Path
from typing import Any

from assay._errors import InvalidInput

KEY_BYTES = 32
ENTRY_LIMIT = 8 * 1024 * 1024
"""Largest entry read back; anything larger is not an entry assay wrote."""
MAGIC = b"assay.signed/1\n"
_HEX_KEY = re.compile(r"^[0-9a-f]{64}$")


def canonical_digest(document: Any) -> str:
    """sha256 of one canonical JSON encoding (sorted keys, no spaces, lists kept as lists)."""
    encoded = json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return hashlib.sha256(encoded.encode("ascii")).hexdigest()


def default_cache_dir() -> Path:
    """Where assay's caches live: ``$XDG_CACHE_HOME/assay/judgments`` (proof verdicts, and
    checker conformance in its ``conformance/`` folder)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "assay" / "judgments"


def default_key_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "assay" / "cache.key"


def private_folder(folder: Path) -> None:
    """Create ``folder`` (and parents) and make it 0700 when it is ours."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.stat(folder)
    if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(folder, 0o700)


def load_key(path: Path) -> bytes:
    """The verifier's secret, created once if absent; InvalidInput when the file is unsafe."""
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    private_folder(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".cache.key.")  # mode 0600
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(secrets.token_bytes(KEY_BYTES).hex().encode() + b"\n")
        with contextlib.suppress(FileExistsError):  # atomic create-if-absent: first key wins
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InvalidInput(
            f"the cache key cannot be opened safely ({exc.strerror})", where=str(path)
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInput("the cache key must be a regular file", where=str(path))
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise InvalidInput(
                "the cache key must be owned by the verifier's user with mode 0600",
                where=str(path),
            )
        text = os.read(fd, 256).decode("ascii", errors="replace").strip()
    finally:
        os.close(fd)
    if not _HEX_KEY.fullmatch(text):
        raise InvalidInput(
            f"the cache key must be {KEY_BYTES} bytes in hex; delete it to make a new one",
            where=str(path),
        )
    return bytes.fromhex(text)


class SignedStore:
    """A folder of signed JSON entries in one namespace, addressed by sha256 hex keys."""

    def __init__(self, folder: Path, namespace: str, key_file: Path | None = None) -> None:
        self.folder = folder
        self.namespace = namespace
        self.key_file = key_file or default_key_file()
        self._secret: bytes | None = None

    def _mac(self, key: str, payload: bytes) -> bytes:
        if self._secret is None:
            self._secret = load_key(self.key_file)
        message = b"\0".join((self.namespace.encode(), key.encode(), payload))
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest().encode()

    def path(self, key: str) -> Path:
        if not _HEX_KEY.fullmatch(key):
            raise ValueError(f"a cache key is 64 lower-case hex digits, not {key!r}")
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        """The payload stored under ``key``, or None (a bad entry is removed, never returned)."""
        path = self.path(key)
        try:
            raw = _read_entry(path)
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
        self.remove(key)
        return None

    def put(self, key: str, payload: Any) -> None:
        data = json.dumps(payload, sort_keys=True, allow_nan=False).encode()
        path = self.path(key)
        private_folder(self.folder)
        if path.parent.is_symlink():
            return  # planted by someone else: write nothing through it
        private_folder(path.parent)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(MAGIC + self._mac(key, data) + b"\n" + data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise

    def remove(self, key: str) -> None:
        path = self.path(key)
        if path.parent.is_symlink():
            return
        with contextlib.suppress(OSError):
            os.unlink(path)


def _read_entry(path: Path) -> bytes | None:
    """The entry's bytes; None when it is not a regular file or is too large to be one of ours."""
    if path.parent.is_symlink():
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
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
