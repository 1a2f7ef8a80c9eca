"""Class: the tamper guard fooled by equality (issue 7, item 5, last sentence).

The guard compared the functions a check relies on to fail with ``==``, so a replaced
``sys.exit`` whose ``__eq__`` returns True was not reported. It now compares with ``is``. And in
the new design the candidate's code runs in its own process: whatever it replaces there is not
the check's ``sys``, ``os`` or ``builtins``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

EQUAL_TO_ALL = """
class EqualToAll:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
    def __call__(self, *args):
        return None
"""

TARGETS = ["sys.exit", "os._exit", "os.kill", "sys.excepthook", "builtins.quit"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_replacement_equal_to_everything_is_reported(tmp_path: Path, target: str) -> None:
    module = target.split(".")[0]
    code = f"import {module}\n{EQUAL_TO_ALL}\n{target} = EqualToAll()\n"
    outcome = run(tmp_path, {}, {"kind": "python", "code": code})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "replaced sys.exit" in outcome.detail


CANDIDATE_TAMPERING = {
    "replace_exit": "import sys, builtins\nsys.exit = builtins.exit = lambda *a: None",
    "equal_to_all": f"import sys\n{EQUAL_TO_ALL}\nsys.exit = EqualToAll()",
    "delete_exit": "import sys\ndel sys.exit",
    "patch_main": "import sys\nsys.modules['__main__'].__dict__['wrong'] = False",
    "patch_assert": "import builtins\nbuiltins.AssertionError = type('Nope', (Exception,), {})",
}


@pytest.mark.parametrize("name", sorted(CANDIDATE_TAMPERING))
def test_the_candidate_cannot_touch_the_checks_interpreter(tmp_path: Path, name: str) -> None:
    solution = CANDIDATE_TAMPERING[name] + "\ndef answer():\n    return 0\n"
    code = (
        "import sys\nwrong = True\nfrom solution import answer\n"
        "if answer() != 42:\n    sys.exit(1)\nassert not wrong\n"
    )
    outcome = run(tmp_path, {"solution.py": solution}, {"kind": "python", "code": code})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "exit code 1" in outcome.detail
