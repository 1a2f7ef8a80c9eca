"""Running untrusted code isolated: bubblewrap namespaces, an unprivileged uid, limits, a kill.

Every kind that executes code, the proof judges and the checker protocol go through
``Sandbox.run``. This is the package's whole face: the layers above (``proofs``, ``checks``,
``cli``) import from here, never from a private ``_x`` module (``tests/test_layers.py``).

- running: ``Sandbox`` (``configured_sandbox``: the one a ``Config`` describes), ``Limits``,
  ``Mount``, ``RunResult``, ``kill_tree``;
- staging trees into it: ``snapshot``, ``make_readable``, ``StagingTooLarge``, the caps
  ``MAX_ENTRIES`` and ``MAX_DEPTH``, ``SANDBOX_UID``;
- folders it may write: ``CappedFolder``, ``FolderError``, ``remove_tree``;
- the judge's files: ``judge_mounts``, ``PROTECTED_BASH``, ``CANDIDATE_MARK``,
  ``CANDIDATE_OUTPUT``;
- external checkers (the /input, /output protocol) and their conformance fixtures:
  ``run_checker``, ``conform``, ``conformance``, ``run_fixture`` and their records.
"""

from assay._errors import SandboxUnavailable
from assay.sandbox._conform import (
    Conformance,
    Fixture,
    FixtureResult,
    conform,
    conformance,
    run_fixture,
)
from assay.sandbox._folders import CappedFolder, FolderError, remove_tree
from assay.sandbox._judge_files import CANDIDATE_MARK, CANDIDATE_OUTPUT, judge_mounts
from assay.sandbox._limits import FLOOD_FACTOR, Limits
from assay.sandbox._protocol import (
    NAME,
    SCHEMAS,
    CheckerReport,
    CheckerRun,
    InputTooLarge,
    SubmissionUnstageable,
    default_command,
    read_output,
    run_checker,
    stage_input,
    with_result_channel,
)
from assay.sandbox._reading import kill_tree
from assay.sandbox._result import Isolation, LimitName, RunResult
from assay.sandbox._sandbox import (
    Mount,
    Sandbox,
    bwrap_path,
    configured_sandbox,
    python_paths,
    runner_control,
)
from assay.sandbox._shellrun import PROTECTED_BASH
from assay.sandbox._staging import (
    MAX_DEPTH,
    MAX_ENTRIES,
    SANDBOX_UID,
    StagingTooLarge,
    make_readable,
    snapshot,
)

__all__ = [
    "CANDIDATE_MARK",
    "CANDIDATE_OUTPUT",
    "CappedFolder",
    "CheckerReport",
    "CheckerRun",
    "Conformance",
    "FLOOD_FACTOR",
    "Fixture",
    "FixtureResult",
    "FolderError",
    "InputTooLarge",
    "Isolation",
    "LimitName",
    "Limits",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "Mount",
    "NAME",
    "PROTECTED_BASH",
    "RunResult",
    "SANDBOX_UID",
    "SCHEMAS",
    "Sandbox",
    "SandboxUnavailable",
    "StagingTooLarge",
    "SubmissionUnstageable",
    "bwrap_path",
    "configured_sandbox",
    "conform",
    "conformance",
    "default_command",
    "judge_mounts",
    "kill_tree",
    "make_readable",
    "python_paths",
    "read_output",
    "remove_tree",
    "run_checker",
    "run_fixture",
    "runner_control",
    "snapshot",
    "stage_input",
    "with_result_channel",
]
