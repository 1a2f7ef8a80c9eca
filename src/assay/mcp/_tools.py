"""The four tools, as plain functions of their arguments: no MCP here, so each is the exact twin
of a CLI command and can be called (and tested) without a server.

``check`` judges an item with ``assay.episodes`` (the wire format the HTTP API and ``assay
batch`` share), ``verify_answer_key`` is ``assay verify``, ``fill_hole`` and ``goal`` are
``assay hole fill`` and ``assay hole goal``. Each returns the document the CLI prints and raises
``InvalidInput`` (naming the argument) for arguments it cannot use; the server turns that into a
tool error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay.mcp import _arguments as args
from assay.proofs import AgdaLane, cache_for, fill_hole

NO_REWARD = (
    "`inconclusive` (a limit was hit, an input is missing) and `error` (assay's own machinery "
    "failed) are not findings about the work: they carry no reward (`reward` is null), and must "
    "never be read as a pass or as a failure."
)


@dataclass
class Toolbox:
    """What the tools share for the life of one server: the workspace root (None: no file is
    ever read), the configuration, and one warm Agda lane per include path (a lane is one
    process; its lock keeps calls to it one at a time)."""

    root: Path | None
    config: Config
    _lanes: dict[bool, AgdaLane] = field(default_factory=dict, init=False)
    _lane_lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def close(self) -> None:
        """Stop the lanes' Agda processes."""
        with self._lane_lock:
            for lane in self._lanes.values():
                lane.close()
            self._lanes.clear()

    def check(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Judge one item (an ``id`` is optional here) and return ``EpisodeResult.to_json()``."""
        from assay.episodes import judge, parse_episode

        args.within_cap(arguments, self.config.max_file_bytes)
        if "idempotency_key" in arguments:
            raise InvalidInput(
                "not used here: every call is judged afresh", where="idempotency_key"
            )
        item = {"id": "check", **arguments}
        episode = parse_episode(item, root=self.root, config=self.config, where="arguments")
        return judge(episode).to_json()

    def verify_answer_key(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``assay verify``: the submission's outputs against the answer key, recomputed."""
        from assay.checks import score_answers

        args.within_cap(arguments, self.config.max_file_bytes)
        args.exact_keys(arguments, required=("submission", "answer_key"), optional=("detail",))
        answer_key = arguments["answer_key"]
        if not isinstance(answer_key, dict):
            raise InvalidInput("must be an object {task_id: value}", where="answer_key")
        detail = args.flag(arguments, "detail", default=True)
        return score_answers(arguments["submission"], answer_key).to_json(detail=detail)

    def fill_hole(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``assay hole fill``: judge a candidate term in one hole of an Agda file."""
        args.exact_keys(
            arguments, required=("file", "line", "column", "candidate"), optional=("stdlib",)
        )
        file = args.file_under(self.root, arguments, "file")
        line, column = args.position(arguments, "line"), args.position(arguments, "column")
        candidate = args.text(arguments, "candidate") or ""
        stdlib = args.flag(arguments, "stdlib", default=True)
        result = fill_hole(
            file,
            line,
            column,
            candidate,
            stdlib=stdlib,
            cache=cache_for(self.config),
            config=self.config,
        )
        return result.to_json()

    def goal(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``assay hole goal``: the goal type and context at a hole (an answer, no verdict)."""
        args.exact_keys(
            arguments, required=("file", "line", "column"), optional=("infer", "stdlib")
        )
        file = args.file_under(self.root, arguments, "file")
        line, column = args.position(arguments, "line"), args.position(arguments, "column")
        infer = args.text(arguments, "infer")
        stdlib = args.flag(arguments, "stdlib", default=True)
        with self._lane_lock:
            lane = self._lanes.get(stdlib)
            if lane is None:
                lane = self._lanes[stdlib] = AgdaLane(stdlib=stdlib, config=self.config)
            answer = lane.goal(file, line, column)
            if infer is not None:
                answer = answer.with_inferred(infer, lane.infer(file, line, column, infer))
        return answer.to_json()


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a client sees it (name, description, JSON Schema of its arguments) and the
    ``Toolbox`` method that answers it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[Toolbox, Mapping[str, Any]], dict[str, Any]]


_POSITION = {"type": "integer", "minimum": 1, "description": "1-based, of the hole's `{`."}
_FILE = {
    "type": "string",
    "description": "The Agda file, relative to the server's --workspace-root (never modified).",
}
_STDLIB = {"type": "boolean", "default": True, "description": "Put agda-stdlib on the path."}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="check",
        description=(
            "Run a task's checks on an answer and return assay's verdict as JSON "
            '{"id", "status", "score", "reward", "outcomes"}. The arguments are an assay item: '
            "`checks` (a list of check specs, see `assay kinds`) or `task` (an object with "
            "`checks` and optionally `mode`, `answer`, `workspace`, `receipts`), then the "
            "episode: `answer` (the final answer text), `workspace` (a folder relative to the "
            "server's --workspace-root; refused when it has none), `receipts`, `mode` "
            '("all" or "weighted"). `status` "verified" means every check passed on this '
            'answer; "refuted" means a check found the work wrong (`reward` is the score, 0 '
            "for all-mode). The verdict covers exactly these arguments: checks or receipts the "
            f"caller wrote itself prove nothing to anyone else. {NO_REWARD}"
        ),
        input_schema={
            "type": "object",
            "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": 200},
                "checks": {"type": "array", "items": {"type": "object"}},
                "task": {"type": "object"},
                "answer": {"type": "string"},
                "workspace": {"type": "string"},
                "receipts": {"type": "array", "items": {"type": "object"}},
                "mode": {"enum": ["all", "weighted"]},
            },
            "additionalProperties": False,
        },
        run=Toolbox.check,
    ),
    ToolSpec(
        name="verify_answer_key",
        description=(
            "Recompute the reward of a submission against an answer key, exactly as "
            '`assay verify`: `submission` is {"outputs": {task_id: value}, ...} (a '
            "`reported_reward` in it is never read), `answer_key` is {task_id: value}. "
            "Comparison is type-strict and coverage exact (a missing or extra id scores 0). "
            'Returns {"schema", "reward", "accepted", ...}: `accepted` true with reward 1.0 '
            "means every output equals the key; a malformed submission is reward 0 with a "
            "`problem`."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "submission": {"description": '{"outputs": {task_id: value}}'},
                "answer_key": {"type": "object"},
                "detail": {"type": "boolean", "default": True},
            },
            "required": ["submission", "answer_key"],
            "additionalProperties": False,
        },
        run=Toolbox.verify_answer_key,
    ),
    ToolSpec(
        name="fill_hole",
        description=(
            "Judge a candidate term in one hole of an Agda file (a file under the server's "
            "--workspace-root), exactly as `assay hole fill`. `status` is one of solved "
            "(the whole file checks with the term in the hole and no hole left), progress "
            "(it checks, holes remain), type_error (Agda rejects it: a finding), refused "
            "(the term uses something assay forbids, such as a postulate), limit (a time or "
            "memory limit stopped the check: no finding) or error (assay's or Agda's own "
            "failure: no finding). Only solved is a proof; limit and error carry no reward."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "file": _FILE,
                "line": _POSITION,
                "column": _POSITION,
                "candidate": {"type": "string", "description": "The term to put in the hole."},
                "stdlib": _STDLIB,
            },
            "required": ["file", "line", "column", "candidate"],
            "additionalProperties": False,
        },
        run=Toolbox.fill_hole,
    ),
    ToolSpec(
        name="goal",
        description=(
            "Ask Agda's interaction lane for the goal type and the context at a hole of a file "
            "under the server's --workspace-root (and, with `infer`, the type of a term "
            "there), exactly as `assay hole goal`. An answer to a question, never a verdict: "
            "it carries no status and no reward."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "file": _FILE,
                "line": _POSITION,
                "column": _POSITION,
                "infer": {"type": "string", "description": "Also infer this term's type."},
                "stdlib": _STDLIB,
            },
            "required": ["file", "line", "column"],
            "additionalProperties": False,
        },
        run=Toolbox.goal,
    ),
)
"""Every tool the server lists, in the order it lists them."""
