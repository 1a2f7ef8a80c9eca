"""The interaction lane: a warm ``agda --interaction-json`` that answers questions, never verdicts.

Interaction mode loads a file full of holes successfully, exactly where batch Agda exits 42, so
nothing it says may decide anything. Its answers are plain types with no status field: there is
no way to turn one into a verdict. One lane serves one import set; it is recycled after
``max_uses`` questions or when its memory grows past ``max_rss_mb``.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._errors import AssayError
from assay.proofs._judge import stage
from assay.proofs._languages import agda_module_name
from assay.proofs._toolchain import AGDA_STDLIB
from assay.sandbox import Limits, Mount, Sandbox
from assay.sandbox._reading import kill_tree

LANE_DIR = "/lane"


@dataclass(frozen=True)
class ContextEntry:
    name: str
    type: str


@dataclass(frozen=True)
class Goal:
    """The goal at a hole: its type and what is in scope there. Not a verdict."""

    type: str
    context: tuple[ContextEntry, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.type,
            "context": [{"name": e.name, "type": e.type} for e in self.context],
        }


class LaneError(AssayError):
    """The lane could not answer (load failed, no such hole, timeout); ask again or judge."""


class AgdaLane:
    def __init__(
        self,
        sandbox: Sandbox | None = None,
        stdlib: bool = True,
        max_uses: int = 200,
        max_rss_mb: int = 3072,
        timeout: float = 120.0,
    ) -> None:
        self.sandbox = sandbox or Sandbox()
        self.stdlib = stdlib
        self.max_uses = max_uses
        self.max_rss_mb = max_rss_mb
        self.timeout = timeout
        self.uses = 0
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._loaded: tuple[str, bytes] | None = None
        self._buffer = b""

    def __enter__(self) -> AgdaLane:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._process is not None:
            kill_tree(self._process)
            self._process.wait()
            self._process = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
        self._loaded = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is not None and (
            self.uses >= self.max_uses or self._rss_mb() > self.max_rss_mb
        ):
            self.close()
            self.restarts += 1
        if self._process is None:
            self._folder = tempfile.TemporaryDirectory(prefix="assay-lane-")
            stage(Path(self._folder.name), {})
            argv = [
                shutil.which("agda") or "agda",
                "--interaction-json",
                "--no-libraries",
                "-i",
                ".",
            ]
            if self.stdlib:
                argv += ["-i", str(AGDA_STDLIB)]
            self._process = self.sandbox.spawn(
                argv,
                cwd=LANE_DIR,
                mounts=[Mount(Path(self._folder.name), LANE_DIR, writable=True)],
                limits=Limits(timeout=3600, memory_mb=max(self.max_rss_mb * 2, 4096)),
            )
            self.uses = 0
            self._buffer = b""
        return self._process

    def _rss_mb(self) -> float:
        """Resident memory of the lane's whole process tree."""
        if self._process is None:
            return 0.0
        total, pending = 0, [self._process.pid]
        while pending:
            pid = pending.pop()
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            total += next(
                (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")),
                0,
            )
            pending += [int(c) for c in children]
        return total / 1024

    def _ask(self, command: str, until: set[str]) -> list[dict[str, Any]]:
        process = self._process
        if process is None:
            raise LaneError("the interaction lane is not running")
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(command.encode() + b"\n")
        process.stdin.flush()
        replies: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.timeout
        fd = process.stdout.fileno()
        while True:
            while b"\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n", 1)
                text = raw.decode("utf-8", errors="replace").replace("JSON> ", "").strip()
                if not text:
                    continue
                try:
                    reply = json.loads(text)
                except ValueError:
                    continue
                replies.append(reply)
                kind = reply.get("kind")
                info = reply.get("info") if isinstance(reply.get("info"), dict) else {}
                if kind in until or info.get("kind") in until or info.get("kind") == "Error":
                    return replies
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                raise LaneError("the interaction lane did not answer in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.close()
                    raise LaneError("the interaction lane exited")
                self._buffer += chunk

    def _load(self, file: Path) -> str:
        source = file.read_bytes()
        module = agda_module_name(source.decode("utf-8", errors="replace")) or file.stem
        relative = module.replace(".", "/") + ".agda"
        self._start()  # recycles first when due, which forgets what was loaded
        if self._loaded != (relative, source):
            assert self._folder is not None
            stage(Path(self._folder.name), {relative: source})
            path = f"{LANE_DIR}/{relative}"
            replies = self._ask(
                f'IOTCM "{path}" NonInteractive Direct (Cmd_load "{path}" [])',
                {"InteractionPoints"},
            )
            error = _error(replies)
            if error:
                raise LaneError(f"the file does not load: {error}")
            self._points = next(
                r["interactionPoints"] for r in replies if r.get("kind") == "InteractionPoints"
            )
            self._loaded = (relative, source)
        self.uses += 1
        return f"{LANE_DIR}/{relative}"

    def _point(self, line: int, column: int) -> int:
        for point in self._points:
            for span in point.get("range", []):
                start = span.get("start", {})
                if start.get("line") == line and start.get("col") == column:
                    return int(point["id"])
        raise LaneError(f"no hole opens at line {line}, column {column}")

    def goal(self, file: Path, line: int, column: int) -> Goal:
        """The goal type and context at the hole opening at ``line``:``column``."""
        path = self._load(file)
        point = self._point(line, column)
        replies = self._ask(
            f'IOTCM "{path}" NonInteractive Direct (Cmd_goal_type_context Normalised {point} noRange "")',
            {"GoalSpecific"},
        )
        info = _goal_info(replies)
        entries = tuple(
            ContextEntry(
                str(e.get("reifiedName", e.get("originalName", "?"))), str(e.get("binding", ""))
            )
            for e in info.get("entries", [])
        )
        return Goal(str(info.get("type", "")), entries)

    def infer(self, file: Path, line: int, column: int, term: str) -> str:
        """The type Agda infers for ``term`` in the scope of the hole; a question, not a check."""
        if "\n" in term or '"' in term:
            raise LaneError("a term to infer must be one line without double quotes")
        path = self._load(file)
        point = self._point(line, column)
        replies = self._ask(
            f'IOTCM "{path}" NonInteractive Direct (Cmd_infer Normalised {point} noRange "{term}")',
            {"GoalSpecific"},
        )
        return str(_goal_info(replies).get("expr", ""))


def _error(replies: list[dict[str, Any]]) -> str | None:
    for reply in replies:
        info = reply.get("info")
        if isinstance(info, dict) and info.get("kind") == "Error":
            error = info.get("error", {})
            return str(error.get("message", error)) if isinstance(error, dict) else str(error)
    return None


def _goal_info(replies: list[dict[str, Any]]) -> dict[str, Any]:
    error = _error(replies)
    if error:
        raise LaneError(error.splitlines()[0] if error else "error")
    for reply in replies:
        info = reply.get("info")
        if isinstance(info, dict) and info.get("kind") == "GoalSpecific":
            goal_info = info.get("goalInfo")
            if isinstance(goal_info, dict):
                return goal_info
    raise LaneError("the interaction lane gave no answer")
