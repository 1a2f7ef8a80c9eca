"""A submission judged under a revision other than the one it was made under, or the one the
author made current.

Found (xfail until fixed): an author publishes revision A, then B (say, with a wrong expected
value), notices the mistake and publishes A's folder again to go back. Publishing stores nothing
new and prints A's id ("already published: nothing new"), but the problem's current revision
stays B: every later submission is judged under B, and ``assay problem show`` shows B.

Refused correctly (passing): a submission keeps the revision it was made under through
re-checks, after a newer revision is published.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.status import Status
from tests.adversarial.platform_attacks import (
    FINDING,
    Clock,
    answer_contract,
    make_problem,
    opened,
    store,
)


@pytest.mark.xfail(
    strict=True,
    raises=FINDING,
    reason="publishing an earlier revision's folder again prints its id but does not make it "
    "current: submissions go on being judged under the later revision",
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
