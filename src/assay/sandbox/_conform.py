"""Conformance: a checker must reproduce its contract's fixtures before it may judge.

A fixtures folder holds one folder per fixture::

    FIXTURE/artifacts/{role}/...     the submission's files
    FIXTURE/reference/{key}/...      the reference inputs
    FIXTURE/expected.json            {"result": "verified" | "refuted" | "inconclusive"}

A fixture passes when the checker runs cleanly and concludes exactly the expected result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay._errors import InvalidInput
from assay.sandbox._limits import Limits
from assay.sandbox._protocol import VERDICTS, run_checker
from assay.sandbox._sandbox import Sandbox


@dataclass(frozen=True)
class FixtureResult:
    name: str
    expected: str
    got: str
    """The checker's result, or ``error`` when it failed to conclude."""
    detail: str

    @property
    def passed(self) -> bool:
        return self.expected == self.got


def _expected(fixture: Path) -> str:
    from assay.checks._strict import StrictJSONError, loads_strict

    path = fixture / "expected.json"
    try:
        document = loads_strict(path.read_bytes())
    except (OSError, StrictJSONError) as exc:
        raise InvalidInput(f"cannot read the expected result: {exc}", where=str(path)) from None
    result = document.get("result") if isinstance(document, dict) else None
    if result not in VERDICTS:
        raise InvalidInput(f"'result' must be one of {', '.join(VERDICTS)}", where=str(path))
    return str(result)


def _groups(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(folder.iterdir()) if p.is_dir()} if folder.is_dir() else {}


def conform(
    checker: Path,
    fixtures: Path,
    command: list[str] | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
) -> list[FixtureResult]:
    """Run ``checker`` against every fixture folder; InvalidInput for a malformed fixture set."""
    if not checker.exists():
        raise InvalidInput("the checker does not exist", where=str(checker))
    folders = sorted(p for p in fixtures.iterdir() if p.is_dir()) if fixtures.is_dir() else []
    if not folders:
        raise InvalidInput("no fixture folders found", where=str(fixtures))
    sandbox = sandbox or Sandbox()
    results = []
    for fixture in folders:
        expected = _expected(fixture)
        run = run_checker(
            sandbox,
            command,
            checker,
            _groups(fixture / "artifacts"),
            _groups(fixture / "reference"),
            limits or Limits(),
            256 * 1024 * 1024,
        )
        if run.failure is not None:
            tail = run.run.tail.strip().replace("\n", " | ")
            results.append(
                FixtureResult(fixture.name, expected, "error", f"{run.failure}: {tail[-200:]}")
            )
        else:
            assert run.report.result is not None
            results.append(
                FixtureResult(fixture.name, expected, run.report.result, run.report.summary)
            )
    return results
