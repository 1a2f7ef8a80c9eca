"""Is the toolchain sound here and now? A known-good proof, judged the same way, remembered.

When a toolchain fails on a candidate's files in a way that is neither "checks" nor "does not
check" (Agda's internal error, a Coq anomaly, a crash), the cause is either the candidate (a proof
the checker cannot check is not a proof) or the machine. The canary tells them apart: it is run
on the same toolchain, in the same sandbox, under the same limits; if it still judges normally,
the failure belongs to the candidate's files. Its result is kept per toolchain identity for
``CANARY_TTL`` seconds, so a burst of crashing candidates costs one canary.
"""

from __future__ import annotations

import threading
import time

from assay.proofs._batch import run_batch
from assay.proofs._plan import Plan
from assay.proofs._registry import Language, proof_language
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, Sandbox

CANARY_TTL = 600.0
_remembered: dict[str, tuple[float, bool]] = {}
_lock = threading.Lock()


def canary_plan(language: Language, toolchain: Toolchain) -> Plan:
    """A proof of ``1 + 1 = 2`` that every working toolchain accepts, through the real plan."""
    return proof_language(language).canary(toolchain)


def canary_checks(
    language: Language, toolchain: Toolchain, sandbox: Sandbox, limits: Limits
) -> bool:
    """Whether the known-good proof checks (every step exits 0) on this toolchain, now."""
    identity = "\0".join(
        (
            language,
            *toolchain.command,
            toolchain.version,
            toolchain.library,
            sandbox.isolation,
            limits.model_dump_json(),
        )
    )
    now = time.monotonic()
    with _lock:
        remembered = _remembered.get(identity)
        if remembered is not None and now - remembered[0] < CANARY_TTL:
            return remembered[1]
    plan = canary_plan(language, toolchain)
    batch = run_batch(sandbox, plan.files, plan.commands(), limits, plan.mounts, plan.alone)
    ok = len(batch.runs) == len(plan.steps) and all(run.exit_code == 0 for run in batch.runs)
    with _lock:
        _remembered[identity] = (time.monotonic(), ok)
    return ok


def forget() -> None:
    """Drop every remembered canary result (tests, or after the toolchain changed)."""
    with _lock:
        _remembered.clear()
