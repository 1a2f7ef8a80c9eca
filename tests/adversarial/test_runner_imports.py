"""Class: the workspace provides a module the judge itself imports (issue 7, item 3).

The judge once had /workspace first on sys.path and imported ``traceback`` lazily on a failing
check: a workspace ``traceback.py`` ran inside the judge and wrote the completion message. Each
module below walks the frames it runs in for the completion message and writes it to every
descriptor, then exits 0; the check only reads a wrong ``answer.txt``. None may be verified.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

FORGE = """
    import os, sys
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, bytes) and value.endswith(b" completed\\n"):
                for fd in range(3, 256):
                    try:
                        os.write(fd, value)
                    except OSError:
                        pass
        frame = frame.f_back
    os._exit(0)
"""

# Modules the judge imports on some path (a failing check, unittest, shell, the proxy) or that
# the interpreter imports on demand.
NAMES = [
    "traceback",
    "linecache",
    "tokenize",
    "unittest",
    "_ctypes",
    "_socket",
    "_thread",
    "marshal",
    "encodings",
    "codecs",
    "io",
    "os",
]

CHECK = 'assert open("answer.txt").read().strip() == "42", "wrong answer"'


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["python", "hidden_python"])
def test_a_workspace_module_the_judge_imports_never_runs_in_it(
    tmp_path: Path, name: str, kind: str
) -> None:
    files = {"answer.txt": "41\n", f"{name}.py": FORGE}
    # Mentioning unittest makes the judge import it; a failing check makes it print a traceback.
    code = f"# unittest\n{CHECK}" if name == "unittest" else CHECK
    outcome = run(tmp_path, files, {"kind": kind, "code": code})
    assert outcome.status is Status.REFUTED, outcome.detail


@pytest.mark.parametrize("layout", ["module", "package"])
def test_a_package_named_like_the_judges_imports_is_not_imported(
    tmp_path: Path, layout: str
) -> None:
    files = {"answer.txt": "41\n"}
    if layout == "module":
        files["traceback.py"] = FORGE
    else:
        files["traceback/__init__.py"] = FORGE
    outcome = run(tmp_path, files, {"kind": "python", "code": CHECK})
    assert outcome.status is Status.REFUTED
    assert "wrong answer" in outcome.detail  # the real traceback module printed the failure


def test_the_right_answer_is_still_verified(tmp_path: Path) -> None:
    files = {"answer.txt": "42\n", "traceback.py": FORGE}
    outcome = run(tmp_path, files, {"kind": "python", "code": CHECK})
    assert outcome.status is Status.VERIFIED, outcome.detail
