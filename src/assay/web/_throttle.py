"""Rate limits on logging in, kept in memory: bounded, per client address and per user.

A token is 256 random bits, so guessing one is hopeless; the limits are there so that a script
hammering the login form (or the API with made-up tokens) is told to wait instead of making the
server hash tokens and the ledger grow without end. Two windows:

- **per client** (the peer address the server sees): failed sign-ins, on the form and as bad
  bearer tokens on ``/v1``. Past the limit, the client's sign-ins are refused (429 with
  ``Retry-After``) *before* its token is looked at, so a guesser learns nothing more.
- **per user**: sessions started. Each login writes a ledger entry; a leaked token used in a
  loop cannot fill the ledger.

The state is per server process and forgets at restart; behind a proxy every client has the
proxy's address (put the limit in the proxy then). Memory is bounded: at most ``max_keys``
keys per window, the least recently used forgotten first.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limit:
    """At most ``count`` events in any ``seconds``."""

    count: int
    seconds: float


class Window:
    """A sliding window of event times per key, bounded in keys and in events per key.

    An event can be *taken* before it is known to count (a sign-in whose token is still being
    looked up) and *settled* later. While a key's window is full only because some of its
    events are still undecided, ``take`` waits for them (up to its ``patience``) instead of
    refusing: otherwise a burst of right tokens would be told to wait for failures that never
    happened, and a burst of guesses would all be looked at before any counted."""

    def __init__(
        self, limit: Limit, max_keys: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.max_keys = max_keys
        self.clock = clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()
        self._open: dict[str, int] = {}
        self._decided = threading.Condition()

    def _live(self, key: str, now: float) -> deque[float]:
        events = self._events.get(key)
        if events is None:
            events = deque(maxlen=self.limit.count)
            self._events[key] = events
            while len(self._events) > self.max_keys:
                self._events.popitem(last=False)
        self._events.move_to_end(key)
        while events and events[0] <= now - self.limit.seconds:
            events.popleft()
        return events

    def _wait(self, events: deque[float], now: float) -> int:
        return max(1, math.ceil(events[0] + self.limit.seconds - now))

    def wait(self, key: str) -> int:
        """Seconds until ``key`` may act again (0: now)."""
        with self._decided:
            now = self.clock()
            events = self._live(key, now)
            return 0 if len(events) < self.limit.count else self._wait(events, now)

    def record(self, key: str) -> None:
        """One event for ``key`` now."""
        with self._decided:
            now = self.clock()
            self._live(key, now).append(now)

    def take(self, key: str, patience: float = 0.0) -> int:
        """Check and take one undecided event in one step: the seconds to wait (nothing
        taken), or 0 after taking it; ``settle`` must follow. Checking with ``wait`` and
        recording after a slow step (a ledger read) would let every request in flight pass the
        check before any is counted. Blocks up to ``patience`` seconds while undecided events
        of ``key`` fill the window: call it from a worker thread, never an event loop."""
        with self._decided:
            deadline = time.monotonic() + patience
            while True:
                now = self.clock()
                events = self._live(key, now)
                if len(events) < self.limit.count:
                    events.append(now)
                    self._open[key] = self._open.get(key, 0) + 1
                    return 0
                left = deadline - time.monotonic()
                if not self._open.get(key) or left <= 0:
                    return self._wait(events, now)
                self._decided.wait(left)

    def settle(self, key: str, counts: bool) -> None:
        """Decide one event ``take`` gave ``key``: it stays (``counts``) or is undone (the
        attempt turned out not to count: a right token)."""
        with self._decided:
            left = self._open.get(key, 0) - 1
            if left > 0:
                self._open[key] = left
            else:
                self._open.pop(key, None)
            events = self._events.get(key)
            if not counts and events:
                events.pop()
            self._decided.notify_all()


PATIENCE = 5.0
"""Seconds a sign-in waits for undecided sign-ins of its address (or user) to be decided."""


@dataclass
class LoginLimits:
    """The two windows of signing in (defaults: 20 failures a client per 5 minutes, 30
    sessions a user per hour)."""

    failures: Window = field(default_factory=lambda: Window(Limit(20, 300.0)))
    sessions: Window = field(default_factory=lambda: Window(Limit(30, 3600.0)))


def client_of(host: str | None) -> str:
    """The key of a client: the peer address (``-`` when the server does not know it). An
    IPv6 peer is keyed by its /64 (one host is usually given a whole /64, so keying by the
    address would give it 2**64 allowances), an IPv4-mapped IPv6 address by its IPv4 one."""
    if not host:
        return "-"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
