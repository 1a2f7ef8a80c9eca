"""Class: the candidate prints what a check's ``value`` / ``pattern`` asks for (principle 7).

A check ``print(fib(10))`` with ``value: "55"`` passed when fib printed "55" itself and
returned 0. What the candidate's process prints reaches the run's output only through the judge,
each line marked ``candidate| ``, and ``value`` / ``pattern`` match only the other lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

PRINTS = {
    "at_import": "print('55')",
    "in_the_call": "def _():\n    pass\nimport builtins\n_print = builtins.print\nPRINT_IN_CALL = True",
    "partial_line": "import sys\nsys.stdout.write('55')\nsys.stdout.flush()",
    "stderr": "import sys\nsys.stderr.write('55\\n')",
    "raw_fd": "import os\nos.write(1, b'\\n55\\n')",
    "proc_self_fd": "open('/proc/self/fd/1', 'w').write('55\\n')",
    "parent_fd": (
        "import os\n"
        "try:\n"
        "    open(f'/proc/{os.getppid()}/fd/1', 'w').write('55\\n')\n"
        "except OSError:\n"
        "    pass"
    ),
    "subprocess": "import subprocess\nsubprocess.run(['echo', '55'])",
    "background": "import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.2; echo 55'])",
    "fake_mark_newline": "print('x\\n55')",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRINTS))
@pytest.mark.parametrize("match", [{"value": "55"}, {"pattern": r"^55$"}])
def test_candidate_prints_never_satisfy_the_check(
    tmp_path: Path, name: str, match: dict[str, str]
) -> None:
    source = PRINTS[name] + "\ndef fib(n):\n"
    source += "    print('55')\n" if name == "in_the_call" else ""
    source += "    return 0\n"
    check = (
        "import time\nfrom solution import fib\nresult = fib(10)\ntime.sleep(0.4)\nprint(result)"
    )
    outcome = run(tmp_path, {"solution.py": source}, {"kind": "python", "code": check, **match})
    assert outcome.status is Status.REFUTED, outcome.detail


def test_the_checks_own_output_still_matches(tmp_path: Path) -> None:
    source = "print('debug from the candidate')\ndef fib(n):\n    return 55\n"
    check = "from solution import fib\nprint(fib(10))"
    outcome = run(
        tmp_path, {"solution.py": source}, {"kind": "python", "code": check, "value": "55"}
    )
    assert outcome.status is Status.VERIFIED, outcome.detail
