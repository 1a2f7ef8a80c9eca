"""Idempotency keys: a client that retries a request gets the verdict it was already given,
and a key can never buy a verdict for other work.

A key is bound to the fingerprint of the first item that used it (the item without its id and
key: ``Episode.fingerprint``). The same key with the same fingerprint answers the stored result
(under the new item's id); the same key with another fingerprint is refused, whether the first
is stored or still being judged, because answering it would hand one piece of work the verdict
earned by another: a reward hack. Only findings (``verified``, ``refuted``) are kept; a retry of
an ``inconclusive`` or ``error`` item is judged again. The store is bounded: least recently used keys go first, and
a forgotten key is simply judged afresh. It lives in one process and is touched only from the
event loop, so it needs no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

KEPT = ("verified", "refuted")
"""The statuses a key keeps: findings about the work. ``inconclusive`` (a limit, perhaps hit
under load) and ``error`` are judged again on a retry."""


@dataclass
class _Entry:
    fingerprint: str
    result: dict[str, Any] | None  # None while the first item with this key is being judged


@dataclass(frozen=True)
class Claim:
    """What the store says about one key: ``stored`` (answer it), ``conflict`` (refuse the
    item), or neither (judge it; then ``settle``)."""

    stored: dict[str, Any] | None = None
    conflict: bool = False


class IdempotencyStore:
    """Keys to (fingerprint, result), least recently used dropped past ``capacity``."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def claim(self, key: str, fingerprint: str) -> Claim:
        """Look ``key`` up for work with ``fingerprint``, reserving it when it is new."""
        entry = self._entries.get(key)
        if entry is None:
            if self.capacity:
                self._entries[key] = _Entry(fingerprint, None)
                self._trim()
            return Claim()
        self._entries.move_to_end(key)
        if entry.fingerprint != fingerprint:
            return Claim(conflict=True)
        return Claim(stored=entry.result)

    def settle(self, key: str, fingerprint: str, result: dict[str, Any] | None) -> None:
        """Keep ``result`` for ``key`` (``None``, or a result that is not a finding: forget the
        reservation). Never overwrites a key bound to another fingerprint."""
        entry = self._entries.get(key)
        if entry is not None and entry.fingerprint != fingerprint:
            return
        if result is None or result.get("status") not in KEPT:
            if entry is not None and entry.result is None:
                del self._entries[key]
            return
        if entry is not None and entry.result is not None:
            return  # the first verdict stays the one answered
        if self.capacity:
            self._entries[key] = _Entry(fingerprint, result)
            self._entries.move_to_end(key)
            self._trim()

    def _trim(self) -> None:
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
