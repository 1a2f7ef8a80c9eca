"""Exhausting a sandbox template: what one check does to use up resources never changes another
check's verdict, and never the template.

Every python check's judge is forked from one long-lived template, so it is a resource the
checks share. Each instance runs several checks that attack it at once (fork bombs, memory,
checks that never end, orphans for the run's init to reap, output floods) while other checks,
one right and one wrong, run on the same template: the attacks are never verified, never
assay's `error`, the right check is verified, the wrong one refuted, and afterwards the same
template still serves.
"""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Outcome, Status, build_check
from assay.sandbox import Sandbox
from tests.sandbox.zygote_helpers import template_pids, zygote_sandbox

SOLUTION = {"solution.py": "def add(a, b):\n    return a + b\n"}
RIGHT = "from solution import add\nassert add(2, 3) == 5\n"
WRONG = "from solution import add\nassert add(2, 2) == 5\n"

ATTACKS = {
    "a fork bomb that keeps every process": """
        import os, time
        def answer():
            while True:
                try:
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                except OSError:
                    time.sleep(30)
    """,
    "memory past the limit, in many processes": """
        import os, time
        def answer():
            for _ in range(8):
                if os.fork() == 0:
                    blocks = [bytearray(8 << 20) for _ in range(64)]
                    time.sleep(30)
            time.sleep(30)
    """,
    "a check that never ends": """
        import time
        def answer():
            while True:
                time.sleep(1)
    """,
    "orphans for the run's init to reap": """
        import subprocess, time
        def answer():
            group = ' '.join([': &'] * 40)
            subprocess.Popen(['sh', '-c', f'while :; do ( {group} ) ; done'])
            time.sleep(30)
    """,
    "an output flood from every process": """
        import os
        def answer():
            for _ in range(4):
                os.fork()
            while True:
                os.write(1, b'x' * 65536)
    """,
}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return zygote_sandbox()


def _run(sandbox: Sandbox, root: Path, files: dict[str, str], spec: dict[str, Any]) -> Outcome:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    return build_check(spec).run(CheckContext(workspace=root, sandbox=sandbox))


@pytest.mark.slow
@pytest.mark.parametrize("rules", [False, True], ids=["limits inconclusive", "limits are rules"])
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attacks_on_the_shared_template_change_no_other_verdict(
    sandbox: Sandbox, tmp_path: Path, attack: str, rules: bool
) -> None:
    before = template_pids()
    attacked = {"solve.py": ATTACKS[attack]}
    attack_spec = {
        "kind": "python",
        "code": "import solve\nassert solve.answer() == 42\n",
        "timeout": 4,
        "memory_mb": 64,
        "limits_are_rules": rules,
    }
    jobs: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
        f"attack {i}": (attacked, attack_spec) for i in range(3)
    }
    jobs["right"] = (SOLUTION, {"kind": "python", "code": RIGHT, "timeout": 20})
    jobs["wrong"] = (SOLUTION, {"kind": "python", "code": WRONG, "timeout": 20})
    outcomes: dict[str, Outcome] = {}

    def one(name: str) -> None:
        files, spec = jobs[name]
        outcomes[name] = _run(sandbox, tmp_path / name.replace(" ", "-"), files, spec)

    threads = [threading.Thread(target=one, args=(name,)) for name in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes["right"].status is Status.VERIFIED, outcomes["right"].detail
    assert outcomes["wrong"].status is Status.REFUTED, outcomes["wrong"].detail
    expected = {Status.REFUTED} if rules else {Status.REFUTED, Status.INCONCLUSIVE}
    for name, outcome in outcomes.items():
        if name.startswith("attack"):
            assert outcome.status in expected, (name, outcome.status, outcome.detail)
    assert not before or template_pids() == before, "the template was replaced"
