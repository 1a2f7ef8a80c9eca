"""Task files: checks plus the episode they judge, as ``assay check`` reads them.

::

    {"checks": [{"kind": ..., ...}, ...], "mode": "all" | "weighted",
     "answer": "...", "workspace": "dir", "receipts": [{"url": ..., "status": 200}]}

Relative paths resolve against the task file's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay._config import DEFAULT_CONFIG, Config
from assay._errors import InvalidInput
from assay._files import read_regular
from assay._strict import StrictJSONError, loads_strict
from assay.checks._context import CheckContext, Receipt
from assay.checks._engine import Check, build_checks, run_checks, spec_error
from assay.status import Mode, Report


class _TaskFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    checks: list[dict[str, Any]]
    mode: Mode = Field(Mode.ALL, strict=False)
    answer: str | None = None
    workspace: str | None = None
    receipts: list[Receipt] = []
    description: str | None = None


@dataclass(frozen=True)
class Task:
    """A loaded task: validated checks, the mode, and the context they run against."""

    checks: list[Check]
    mode: Mode
    context: CheckContext

    def run(self) -> Report:
        """Run every check against the task's context and combine the outcomes by its mode."""
        return run_checks(self.checks, self.context, self.mode)

    def with_answer(self, answer: str) -> Task:
        """The same task judging another answer (``--answer-file``); the loaded task is left as it was."""
        return replace(self, context=replace(self.context, answer=answer))


def parse_task(
    data: Any, base_dir: Path, config: Config | None = None, where: str = "task"
) -> Task:
    """A Task from already-parsed JSON; InvalidInput names the field that is wrong."""
    if not isinstance(data, dict):
        raise InvalidInput(f"must be a JSON object, not {type(data).__name__}", where=where)
    try:
        task = _TaskFile.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(spec_error(exc), where=where) from None
    checks = build_checks(task.checks, where=f"{where}: checks")
    workspace = (base_dir / task.workspace) if task.workspace is not None else None
    context = CheckContext(
        answer=task.answer,
        workspace=workspace,
        receipts=tuple(task.receipts),
        base_dir=base_dir,
        config=config or Config(),
    )
    return Task(checks, task.mode, context)


def load_task(path: str | Path, config: Config | None = None) -> Task:
    """Read and validate a task file; InvalidInput names the file and what is wrong with it."""
    path = Path(path)
    text = read_regular(path, (config or DEFAULT_CONFIG).max_file_bytes, "task file")
    try:
        data = loads_strict(text)
    except StrictJSONError as exc:
        raise InvalidInput(f"not valid JSON: {exc}", where=str(path)) from None
    return parse_task(data, path.resolve().parent, config, where=str(path))


def check_task(path: str | Path, answer: str | None = None, config: Config | None = None) -> Report:
    """Load a task file and run it; ``answer`` replaces the file's answer when given."""
    task = load_task(path, config)
    if answer is not None:
        task = task.with_answer(answer)
    return task.run()
