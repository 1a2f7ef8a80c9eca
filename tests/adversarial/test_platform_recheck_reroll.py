"""Re-checking until a flaky submission passes.

Any participant may re-check their own submission, as often as they like: a re-check spends no
allowance, and the current verdict is the latest finding (verified or refuted) of a counted run.
A submission whose code passes by chance (here: half the time, from ``os.urandom``) is re-checked
until a run says verified, and the verdict then reads ``Verified`` although a counted run of the
same checker on the same bytes under the same revision refuted it.

Found here and fixed by the lead while this was written (now a passing regression test). Wanted:
conflicting findings of one checker on the same bytes are not ``Verified`` (e.g. "conflicting
findings": inconclusive), and/or a participant's re-checks count toward the allowance.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.status import Status
from tests.adversarial.platform_attacks import Clock, artifact, make_problem, opened, store

CONTRACT = {
    "roles": [{"name": "solution.py", "max_bytes": 1000}],
    "acceptance": "solution.answer() returns 42",
    "stages": [
        {
            "name": "runs",
            "type": "sandbox",
            "checks": [
                {
                    "kind": "python",
                    "timeout": 20,
                    "code": "import solution\nassert solution.answer() == 42\n",
                }
            ],
        }
    ],
}
COIN = "import os\n\ndef answer():\n    return 42 if os.urandom(1)[0] < 128 else 0\n"


@pytest.mark.slow
def test_rechecking_a_coin_flip_until_it_passes_is_not_verified(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=CONTRACT), "mgr")
        run = platform.submit(
            "demo", {"solution.py": artifact(tmp_path, "s.py", COIN)}, None, "alice"
        )
        seen = [run.status]
        while len(seen) < 40 and not (Status.REFUTED in seen and seen[-1] is Status.VERIFIED):
            seen.append(platform.recheck(run.submission, "alice").status)
        assert Status.REFUTED in seen and seen[-1] is Status.VERIFIED, seen  # the coin fell
        verdict = platform.show(run.submission, "alice").verdict
    assert verdict.standing is not Status.VERIFIED, (verdict.text, seen)
