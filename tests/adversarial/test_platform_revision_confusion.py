"""A submission judged under a revision other than the one it was made under, or the one the
author made current.

Found here and fixed by the lead while this was written (now passing): an author publishes revision
A, then B (say, with a wrong expected value), notices the mistake and publishes A's folder again to
go back. Publishing stores nothing new and prints A's id ("already published: nothing new"), but
the problem's current revision stays B: every later submission is judged under B, and ``assay
problem show`` shows B.

Also found and fixed (now passing): two first publishes of a NEW problem id at once (alice's folder
and mallory's) both land: two ``problem.published`` records with different managers, both revisions
published, and when mallory's lands last the current revision is hers (seen 4 of 4 times with two
threads). The managers check is made before the append, outside its transaction.

Refused correctly (passing): a submission keeps the revision it was made under through
re-checks, after a newer revision is published.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    make_problem,
    opened,
    store,
)


def test_republishing_an_earlier_folder_makes_it_current_again(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        folder = make_problem(tmp_path, contract=answer_contract("42"))
        first = platform.publish(folder, "mgr")
        make_problem(tmp_path, contract=answer_contract("43"))  # the mistake
        assert platform.publish(folder, "mgr").new
        make_problem(tmp_path, contract=answer_contract("42"))  # back to the first folder
        again = platform.publish(folder, "mgr")
        assert again.revision == first.revision
        shown = platform.problem("demo")
        run = platform.submit("demo", {}, "42", "alice")
    assert shown.revision == again.revision, "problem show names another revision"
    assert run.status is Status.VERIFIED, run.detail


@pytest.mark.slow
def test_a_new_problem_id_gets_one_first_publisher(db_url: str, tmp_path: Path) -> None:
    for trial in range(5):
        root = tmp_path / f"t{trial}"
        root.mkdir()
        config = store(db_url, root)  # one store per test: a new problem id per trial
        problem = f"demo{trial}"
        honest = make_problem(root / "a", problem=problem, contract=answer_contract("42"))
        outsider = make_problem(root / "m", problem=problem, contract=answer_contract("anything"))
        clock = Clock()
        with opened(config, clock) as one, opened(config, clock) as two:
            barrier = threading.Barrier(2)

            def publish(
                side: Platform, folder: Path, who: str, gate: threading.Barrier = barrier
            ) -> None:
                gate.wait(timeout=60)
                with contextlib.suppress(InvalidInput):
                    side.publish(folder, who)

            threads = [
                threading.Thread(target=publish, args=(one, honest, "alice")),
                threading.Thread(target=publish, args=(two, outsider, "mallory")),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            found = one.ledger.find(kind="problem.published", subject=problem)
            revisions = one.ledger.find(kind="revision.published", problem=problem)
        assert len(found) == 1, [e.body["managers"] for e in found]
        assert len(revisions) == 1, "the loser's revision was published too"


def test_a_submission_keeps_its_revision_through_rechecks(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        folder = make_problem(tmp_path, contract=answer_contract("42"))
        first = platform.publish(folder, "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        make_problem(tmp_path, contract=answer_contract("43"))
        second = platform.publish(folder, "mgr")
        assert second.revision != first.revision
        again = platform.recheck(run.submission, "alice")
        assert again.status is Status.VERIFIED
        assert platform.show(run.submission, "alice").revision == first.revision
        later = platform.submit("demo", {}, "42", "bob")
        assert later.status is Status.REFUTED
        assert platform.show(later.submission, "bob").revision == second.revision
