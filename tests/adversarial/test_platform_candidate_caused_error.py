"""A participant makes its own run end in ``error`` (assay's fault), which costs no allowance.

``error`` means assay's own machinery failed and must never be caused by candidate input; a
submission whose first run ends in ``error`` does not count toward the allowance, so a
participant who can provoke it submits for free (and floods the store).

Found here and fixed by the lead while this was written (now passing): a folder artifact whose
deepest path fits where the blob store copies it (a short ``ASSAY_BLOBS``) but not where the run
lays the workspace out (``/tmp/assay-platform-*/tmp*/workspace/<role>/``, given as ``--artifact
doc=.`` from inside the folder): every run ends "verification error: OSError inside assay while
evaluating", and with an allowance of one a day the participant submits again and again.

Refused correctly (passing): candidate code that kills its judge, kills every process it can
see, or closes the judge's descriptors is ``refuted`` (and counts).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import AllowanceUsed
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    artifact,
    make_problem,
    opened,
    store,
)

ONE_A_DAY = {"allowance": {"count": 1, "window_hours": 24}}


@pytest.mark.slow
def test_a_folder_too_deep_for_the_workspace_is_not_an_error_of_assay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = Path(tempfile.mkdtemp(prefix="b", dir="/tmp"))  # a short blob root, as configured
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path).model_copy(update={"blobs": str(blobs)})
    contract = {**answer_contract(), "roles": [{"name": "doc", "max_bytes": 1000}]}
    tree = tmp_path / "tree"
    tree.mkdir()
    monkeypatch.chdir(tree)
    for _ in range(16):
        os.mkdir("d" * 250)
        os.chdir("d" * 250)
    os.mkdir("e" * (4050 - 16 * 251 - 2))
    os.chdir("e" * (4050 - 16 * 251 - 2))
    Path("f").write_text("x")
    os.chdir(tree)
    try:
        with opened(config, Clock()) as platform:
            platform.publish(make_problem(tmp_path, contract=contract, policy=ONE_A_DAY), "mgr")
            try:
                first = platform.submit("demo", {"doc": Path(".")}, "42", "alice")
            except InvalidInput:
                pass  # refused at the door (naming the role) is fine, if it counts
            else:
                assert first.status is not Status.ERROR, first.detail
            with pytest.raises(AllowanceUsed):
                platform.submit("demo", {"doc": Path(".")}, "43", "alice")
    finally:
        os.chdir(tmp_path)
        shutil.rmtree(blobs, ignore_errors=True)


SOLUTION_CONTRACT = {
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


@pytest.mark.parametrize(
    "code",
    [
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\ndef answer(): return 42\n",
        "import os, signal\nos.kill(-1, signal.SIGKILL)\ndef answer(): return 42\n",
        "def answer():\n    import os\n    for fd in range(3, 200):\n"
        "        try: os.close(fd)\n        except OSError: pass\n    return 42\n",
    ],
    ids=["kill-the-judge", "kill-everything", "close-the-judges-descriptors"],
)
def test_candidate_code_cannot_turn_its_refutation_into_an_error(tmp_path: Path, code: str) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(
            make_problem(tmp_path, contract=SOLUTION_CONTRACT, policy=ONE_A_DAY), "mgr"
        )
        run = platform.submit(
            "demo", {"solution.py": artifact(tmp_path, "s.py", code)}, None, "alice"
        )
        assert run.status is Status.REFUTED, run.detail
        with pytest.raises(AllowanceUsed):
            platform.submit(
                "demo", {"solution.py": artifact(tmp_path, "t.py", code)}, None, "alice"
            )
