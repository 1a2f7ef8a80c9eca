"""Judging a request's items: each parsed and judged on its own, results in request order.

The work of one request is split by cost. Most answer-only items are microseconds of pure
Python: they are parsed and judged in one pass on one thread per request (not one hop per item),
on the service's own pool of ``max_requests`` threads (a request holds a place from before its
body is read, so every admitted request has a thread: none waits behind another client's).
Measured against running a small request's pass on the event loop itself: no faster (single-item
p50 6-11 ms on the thread, 14-15 ms on the loop, on a loaded 2-core machine), so one path.

Two answer-only kinds are not microseconds: ``answer_math`` (a sympy worker process behind one
lock, up to the item's ``time_limit``) and ``sql_query`` (SQLite, seconds). Items with such a
check go to a bounded queue of their own (``slow``, ``sandbox_jobs`` threads), so a policy's
pathological math waits there and a plain ``answer_equals`` request is still answered at once
(adversarial finding S3). Items that run code go to the bounded ``SandboxQueue``. Queued items
are admitted all together or refused with 429 before anything runs. An invalid item, or an
idempotency key reused for other work, is that item's ``error`` result; it never fails the
batch.

When the client goes away, the pass's cancel event is set: the answer-only pass stops at the
next item, and queued sandboxed items are cancelled before they start (``/healthz`` counts them).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from assay._errors import InvalidInput
from assay.episodes import Episode, EpisodeResult, item_id, judge, parse_episode
from assay.service._encoding import Result, as_json
from assay.service._idempotency import IdempotencyStore
from assay.service._problems import ApiError
from assay.service._queue import QueueFull, SandboxQueue
from assay.service._settings import Settings

WATCH_FROM = 64
"""A request with more items than this has its first pass raced against a disconnect; a
shorter one finishes in well under a millisecond an item, so it is not worth a watcher task."""

SLOW_KINDS = frozenset({"answer_math", "sql_query"})
"""Answer-only kinds that take seconds (a worker process, a database): judged on the ``slow``
queue, never on the request threads every request needs."""

REUSED_KEY = (
    "this idempotency key was already used for other work (another item body); a key stands "
    "for one piece of work, so this item is not judged under it: send a new key"
)


class Gone(Exception):
    """The client disconnected; nothing more is judged for it."""


@dataclass
class _Plan:
    """One request's items after the first pass: results so far, and what still runs."""

    results: list[Result | None]
    sandboxed: list[tuple[int, Episode]] = field(default_factory=list)
    slow: list[tuple[int, Episode]] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)
    """The indexes of the items in ``futures``, in the same order (sandboxed, then slow)."""
    futures: list[Future[EpisodeResult]] = field(default_factory=list)
    claims: list[tuple[int, str, str]] = field(default_factory=list)


class Judge:
    """The service's judging state: settings, the sandbox queue, the idempotency store."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.queue = SandboxQueue(settings.sandbox_jobs, settings.queue_bound)
        self.slow = SandboxQueue(settings.sandbox_jobs, settings.queue_bound, "assay-slow")
        self.passes = ThreadPoolExecutor(settings.max_requests, thread_name_prefix="assay-pass")
        self.store = IdempotencyStore(settings.idempotency_entries)
        self._store_lock = threading.Lock()
        self._in_flight = 0  # requests holding a place (event loop only)

    @contextmanager
    def place(self) -> Iterator[None]:
        """One of ``max_requests`` places, held while a request's body is read, parsed and
        judged; 429 at once when none is free, before any of the body is read (so the bodies
        held at once are bounded too). Taken and given back on the event loop only."""
        if self._in_flight >= self.settings.max_requests:
            raise ApiError(
                429,
                f"{self._in_flight} requests are being read and judged, the most this service "
                "takes at once: retry later",
                where="body",
                retry_after=self.settings.retry_after,
            )
        self._in_flight += 1
        try:
            yield
        finally:
            self._in_flight -= 1

    def close(self) -> None:
        """Stop taking work: queued work is cancelled, running work finishes."""
        self.queue.close()
        self.slow.close()
        self.passes.shutdown(wait=False, cancel_futures=True)

    async def judge_all(
        self, items: Sequence[Any], where: str, disconnected: Callable[[], Awaitable[None]]
    ) -> list[Result]:
        """Results for ``items`` in their order; ``Gone`` when the client disconnects first
        (``disconnected()`` completes). Call it holding a ``place``. Raises ``ApiError`` 429 (a
        queue full) or 422 (more queued items than a queue ever holds)."""
        cancel = threading.Event()
        loop = asyncio.get_running_loop()
        watcher: asyncio.Future[None] | None = None
        plan: _Plan | None = None
        try:
            first = loop.run_in_executor(self.passes, self._first_pass, items, where, cancel)
            if len(items) > WATCH_FROM:  # a short pass is not worth a watcher's cost
                watcher = asyncio.ensure_future(disconnected())
                racing: set[asyncio.Future[Any]] = {first, watcher}
                await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
                if watcher.done():
                    cancel.set()
                    plan = await first  # stops at the next item; sandboxed work cancelled below
                    raise Gone()
            plan = await first
            if plan.futures:
                if watcher is None:
                    watcher = asyncio.ensure_future(disconnected())
                waiting = asyncio.gather(*(asyncio.wrap_future(f) for f in plan.futures))
                racing = {waiting, watcher}
                await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
                if not waiting.done():
                    raise Gone()
                for index, result in zip(plan.queued, waiting.result(), strict=True):
                    plan.results[index] = result
            results = [r for r in plan.results if r is not None]
            assert len(results) == len(items)
            return results
        finally:
            if watcher is not None:
                watcher.cancel()
            if plan is not None:
                for future in plan.futures:
                    future.cancel()  # only work not yet started; a no-op once done
                self._settle(plan)

    def _first_pass(self, items: Sequence[Any], where: str, cancel: threading.Event) -> _Plan:
        """Parse every item, answer what the idempotency store already knows, admit and start
        the sandboxed items, then judge the answer-only items here (one thread, in order)."""
        plan = _Plan(results=[None] * len(items))
        inline: list[tuple[int, Episode]] = []
        settings, config = self.settings, self.settings.config
        root, workspaces = settings.workspace_root, None
        if settings.verifier_root is not None:
            root, workspaces = settings.verifier_root, settings.workspace_root
        for index, data in enumerate(items):
            at = f"{where}[{index}]"
            try:
                episode = parse_episode(
                    data, root=root, config=config, where=at, workspaces=workspaces, from_json=True
                )
            except InvalidInput as exc:
                plan.results[index] = EpisodeResult.invalid(item_id(data), str(exc))
                continue
            except Exception as exc:  # assay's own failure on this item: its error, not the batch's
                message = f"{at}: assay failed reading this item: {type(exc).__name__}: {exc}"
                plan.results[index] = EpisodeResult.invalid(item_id(data), message)
                continue
            key = episode.idempotency_key
            if key is not None:
                with self._store_lock:
                    claim = self.store.claim(key, episode.fingerprint)
                if claim.conflict:
                    message = f"{at}.idempotency_key: {REUSED_KEY}"
                    plan.results[index] = EpisodeResult.invalid(episode.id, message)
                    continue
                if claim.stored is None:
                    plan.claims.append((index, key, episode.fingerprint))
                elif not episode.reads_files:  # files may have changed since: judged again
                    plan.results[index] = {**claim.stored, "id": episode.id}
                    continue
            if episode.runs_code:
                plan.sandboxed.append((index, episode))
            elif any(check.kind.name in SLOW_KINDS for check in episode.task.checks):
                plan.slow.append((index, episode))
            else:
                inline.append((index, episode))
        if plan.sandboxed or plan.slow:
            self._admit(plan)
            for queue, queued in ((self.queue, plan.sandboxed), (self.slow, plan.slow)):
                for index, episode in queued:
                    plan.queued.append(index)
                    plan.futures.append(self._submit(queue, episode))
        for index, episode in inline:
            if cancel.is_set():
                break
            plan.results[index] = judge(episode)
        return plan

    def _admit(self, plan: _Plan) -> None:
        """Reserve places for the sandboxed and the slow items, all or none (429 or 422)."""
        reserved: list[tuple[SandboxQueue, int]] = []
        try:
            for queue, count, what in (
                (self.queue, len(plan.sandboxed), "run code"),
                (self.slow, len(plan.slow), "need a slow answer check (answer_math, sql_query)"),
            ):
                if not count:
                    continue
                if count > queue.bound:
                    raise ApiError(
                        422,
                        f"{count} items {what}, more than this service ever queues "
                        f"({queue.bound}): send them in smaller requests",
                        where="items",
                    )
                try:
                    queue.admit(count)
                except QueueFull as exc:
                    name = "sandbox" if queue is self.queue else "slow-answer"
                    raise ApiError(
                        429,
                        f"the {name} queue is full ({exc.free} of {queue.bound} places free, "
                        f"{count} needed): retry later",
                        where="items",
                        retry_after=self.settings.retry_after,
                    ) from None
                reserved.append((queue, count))
        except ApiError:
            for queue, count in reserved:
                queue.release(count)
            self._settle(plan)
            plan.claims.clear()
            raise

    @staticmethod
    def _submit(queue: SandboxQueue, episode: Episode) -> Future[EpisodeResult]:
        return queue.submit_threadsafe(lambda: judge(episode))

    def _settle(self, plan: _Plan) -> None:
        """Keep the verdicts claimed keys earned; release the keys of work that did not finish."""
        with self._store_lock:
            for index, key, fingerprint in plan.claims:
                result = plan.results[index]
                self.store.settle(key, fingerprint, None if result is None else as_json(result))
        plan.claims.clear()
