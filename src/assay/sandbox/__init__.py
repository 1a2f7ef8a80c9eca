"""Running untrusted code isolated: bubblewrap namespaces, an unprivileged uid, limits, a kill.

Every kind that executes code, and later the proof judges, goes through ``Sandbox.run``.
"""

from assay._errors import SandboxUnavailable
from assay.sandbox._limits import Limits
from assay.sandbox._protocol import (
    SCHEMAS,
    CheckerReport,
    CheckerRun,
    InputTooLarge,
    default_command,
    read_output,
    run_checker,
    stage_input,
)
from assay.sandbox._result import Isolation, LimitName, RunResult
from assay.sandbox._sandbox import Mount, Sandbox, bwrap_path, python_paths, runner_control
from assay.sandbox._staging import StagingTooLarge, make_readable, snapshot

__all__ = [
    "CheckerReport",
    "CheckerRun",
    "InputTooLarge",
    "Isolation",
    "LimitName",
    "Limits",
    "Mount",
    "RunResult",
    "SCHEMAS",
    "Sandbox",
    "SandboxUnavailable",
    "StagingTooLarge",
    "bwrap_path",
    "default_command",
    "make_readable",
    "python_paths",
    "read_output",
    "run_checker",
    "runner_control",
    "snapshot",
    "stage_input",
]
