"""Two submissions, runs or attempts must never get the same id.

Ids (``new_id``) are 64 random bits drawn from a per-process buffer of the system's generator. A
shared id merges two histories: ``History`` reads every entry of a subject, so bob's submission
would show alice's runs (and her verdict) as his.

Found here (fixed; kept as regression tests): the buffer is a module global read and replaced without a lock,
so threads of one process (the ledger is built for them: appends take turns under a thread
lock, and the HTTP service will call the platform from a thread pool) draw the same 8 bytes:
measured, 4 threads x 20,000 ids gave 64,229 distinct ids out of 80,000. And nothing refused a
repeated id when it was recorded: forced once, bob's submission showed alice's (and her
verdict); now the append's guard finds the id recorded and the batch is decided again with a
fresh draw.

Refused correctly (passing): a forked child never reuses its parent's unused bytes.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import _platform as platform_module
from assay.platform._platform import new_id
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    make_problem,
    opened,
    store,
)


def test_threads_never_draw_the_same_id() -> None:
    drawn: list[list[str]] = [[] for _ in range(4)]

    def draw(into: list[str]) -> None:
        into.extend(new_id("s") for _ in range(20_000))

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # what a busy thread pool does to the interleaving, sooner
    try:
        threads = [threading.Thread(target=draw, args=(into,)) for into in drawn]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(before)
    ids = [i for into in drawn for i in into]
    assert len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} ids were handed out twice"


def test_a_forked_child_never_reuses_its_parents_bytes() -> None:
    new_id("s")  # the parent now holds a buffer of unused bytes
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.write(write, " ".join(new_id("s") for _ in range(300)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = set(pipe.read().split())
    os.waitpid(pid, 0)
    parent = {new_id("s") for _ in range(300)}
    assert len(child) == 300
    assert not child & parent


def test_a_repeated_submission_id_never_merges_two_submissions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a repeated draw does (forced here): bob's submission gets the id of alice's
    verified one, and his view is her submission and her verdict. The store should refuse (or
    the platform redraw) an id that is already recorded."""
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        alice = platform.submit("demo", {}, "42", "alice")
        repeated = iter([alice.submission])

        def drawn(prefix: str) -> str:
            """The next id, except that the first submission id repeats alice's."""
            return next(repeated, None) or new_id(prefix) if prefix == "s" else new_id(prefix)

        monkeypatch.setattr(platform_module, "new_id", drawn)
        try:
            bob = platform.submit("demo", {}, "41", "bob")
        except InvalidInput:
            return  # refused: the store would not record a second submission under one id
        monkeypatch.undo()
        seen = platform.show(bob.submission, "bob")
        assert seen.participant == "bob", f"bob's submission shows {seen.participant}'s"
        assert seen.verdict.standing is Status.REFUTED, seen.verdict.text
