"""The interaction lane: a warm ``agda --interaction-json`` that answers questions, never verdicts.

Interaction mode loads a file full of holes successfully, exactly where batch Agda exits 42, so
nothing it says may decide anything. Its answers are plain types with no status field: there is
no way to turn one into a verdict. One lane serves one import set; it is recycled after
``max_uses`` questions or when its memory grows past ``max_rss_mb``.

What a file or a term cannot do to it:

- **hang it**: every exchange has a deadline (``timeout``); past it the lane is killed and the
  next question starts a fresh one;
- **flood it**: one exchange may bring at most ``max_reply_bytes``; past that the lane is killed
  (a ``LaneError``). Replies are read into one growing buffer scanned once: linear time;
- **smuggle text into a command**: terms and paths are quoted as Haskell string literals (what
  Agda's command reader expects), every character outside printable ASCII as a numeric escape,
  so ``x\\`` or ``term\\&`` reach Agda exactly as written; a term with a line break or a control
  character is refused;
- **answer about another file**: each exchange reads up to Agda's next prompt, so no reply of an
  earlier command is taken for a later one; a new file empties the lane's folder first (nothing
  of an earlier file can be imported) and a failed load forgets what was loaded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from assay._config import DEFAULT_CONFIG, Config
from assay._errors import AssayError, InvalidInput
from assay._files import readable
from assay._wire import WireModel
from assay.proofs._agda_lex import AgdaLexError, module_header, tokens
from assay.proofs._agda_toolchain import agda_toolchain_for
from assay.proofs._batch import clear, scratch, stage
from assay.proofs._paths import module_problem, read_source
from assay.proofs._toolchain import Toolchain
from assay.sandbox import CappedFolder, Limits, Mount, Sandbox, configured_sandbox, kill_tree

LANE_DIR = "/lane"
PROMPT = b"JSON> "
MAX_REPLY_BYTES = 16 * 1024 * 1024
MAX_TERM_CHARS = 4096
_LOCATED = re.compile(r"\d+,\d+-(\d+,)?\d+\s")
"""How Agda starts an error located in a term given as text (line,column-column)."""


class ContextEntry(WireModel):
    """One name in scope at a hole, with its type as Agda prints it."""

    name: str
    """The name as Agda shows it."""
    type: str
    """Its type, as Agda prints it."""
    in_scope: bool = True
    """Whether the name can be written at the hole (a hidden argument the clause does not bind
    is listed, but cannot be referred to)."""


class Inferred(WireModel):
    """The type Agda infers for a term in the scope of a hole (``hole goal --infer``)."""

    term: str
    """The term asked about, exactly as given."""
    type: str
    """Its type, as Agda prints it."""


class Goal(WireModel):
    """The goal at a hole: its type and what is in scope there. Not a verdict: an answer, the
    document ``assay.goal/1`` that ``assay hole goal`` prints."""

    schema_: Literal["assay.goal/1"] = Field("assay.goal/1", alias="schema")
    type: str = Field(alias="goal")
    """The goal's type (written as ``goal``)."""
    context: tuple[ContextEntry, ...]
    """What is in scope at the hole."""
    inferred: Inferred | None = None
    """With ``--infer``: the type of the term asked about."""

    def with_inferred(self, term: str, type_: str) -> Goal:
        """The same answer, with the type Agda inferred for ``term`` at the hole."""
        return self.model_copy(update={"inferred": Inferred(term=term, type=type_)})


class LaneError(AssayError):
    """The lane could not answer (load failed, no such hole, timeout); ask again or judge."""


class TermRejected(LaneError):
    """Agda answered the question with an error (a term that is not in scope or does not
    typecheck at the hole): an answer about the term, still never a verdict."""


class LaneInputError(LaneError, InvalidInput):
    """What the caller gave the lane cannot be used (a file that is not Agda or does not load, a
    position with no hole, a term that is not one printable line): the caller's input, exit 2."""


def haskell_string(text: str) -> str:
    """``text`` as a Haskell string literal that reads back exactly as ``text``.

    Agda reads interaction commands with Haskell's ``read``: ``\\`` and ``"`` are escaped, and
    every character outside printable ASCII becomes a decimal escape closed by ``\\&`` (so a
    following digit cannot extend it).
    """
    out = ['"']
    for c in text:
        if c in '\\"':
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        else:
            out.append(f"\\{ord(c)}\\&")
    out.append('"')
    return "".join(out)


class AgdaLane:
    """A warm ``agda --interaction-json`` in the sandbox that answers questions about holes
    (``goal``, ``infer``) and never gives a verdict (see the module's docstring).

    The sandbox defaults to the one ``config`` describes; the Agda is the one the batch judge
    uses for the loaded file (``agda_toolchain_for``: under ``agda_toolchain="auto"`` a file
    importing a module the PyPI Agda's library lacks is Debian's, for the lane as for the
    judge; a file needing the other Agda restarts the lane with it), and ``stdlib`` puts its
    agda-stdlib on the include path. Use it as a context manager, or ``close`` it."""

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        stdlib: bool = True,
        max_uses: int = 200,
        max_rss_mb: int = 3072,
        timeout: float = 120.0,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        config: Config = DEFAULT_CONFIG,
    ) -> None:
        self.sandbox = sandbox or configured_sandbox(config)
        self.stdlib = stdlib
        self.config = config
        self.max_uses = max_uses
        self.max_rss_mb = max_rss_mb
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self.uses = 0
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self.toolchain: Toolchain | None = None
        """The Agda the running lane is (None before the first question)."""
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._scratch: CappedFolder | None = None
        self._loaded: tuple[str, bytes] | None = None
        self._points: list[dict[str, Any]] = []
        self._buffer = bytearray()

    def __enter__(self) -> AgdaLane:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """End the lane's process and remove its folder (a later question starts a fresh one)."""
        if self._process is not None:
            kill_tree(self._process)
            self._process.wait()
            for pipe in (self._process.stdin, self._process.stdout):
                if pipe is not None:
                    pipe.close()
            self._process = None
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
        self._loaded = None
        self._points = []
        self._buffer = bytearray()

    def _start(self, toolchain: Toolchain) -> subprocess.Popen[bytes]:
        """The lane, running ``toolchain`` (a lane running another Agda is ended first)."""
        if self._process is not None and (
            self.uses >= self.max_uses
            or self._rss_mb() > self.max_rss_mb
            or self._process.poll() is not None
            or self.toolchain != toolchain
        ):
            self.close()
            self.restarts += 1
        if self._process is None:
            self._folder = tempfile.TemporaryDirectory(prefix="assay-lane-")
            self._scratch = scratch(Path(self._folder.name))
            stage(self._scratch.path, {})
            self.toolchain = toolchain
            argv = [*toolchain.command, "--interaction-json", "--no-libraries", "-i", "."]
            if self.stdlib:
                for folder in toolchain.search_path:
                    argv += ["-i", folder]
            read_only = [Mount(Path(path), path) for path in toolchain.mounts]
            self._process = self.sandbox.spawn(
                argv,
                cwd=LANE_DIR,
                mounts=[Mount(self._scratch.path, LANE_DIR, writable=True), *read_only],
                limits=Limits(timeout=3600, memory_mb=max(self.max_rss_mb * 2, 4096)),
            )
            self.uses = 0
            self._buffer = bytearray()
            self._until_prompt()  # Agda prompts once before its first command
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

    def _fail(self, message: str) -> LaneError:
        """Kill the lane (the next question starts a fresh one) and say why it did not answer."""
        self.close()
        return LaneError(message)

    def _until_prompt(self) -> list[dict[str, Any]]:
        """Every JSON reply up to Agda's next ``JSON> `` prompt, which ends one exchange."""
        process = self._process
        if process is None or process.stdout is None:
            raise LaneError("the interaction lane is not running")
        fd = process.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        replies: list[dict[str, Any]] = []
        buffer, start, searched, received = self._buffer, 0, 0, 0
        while True:
            while True:
                rest = buffer[start : start + len(PROMPT)]
                if rest == PROMPT:
                    del buffer[: start + len(PROMPT)]
                    return replies
                if PROMPT.startswith(rest):
                    break  # a prompt may be arriving: wait for more
                newline = buffer.find(b"\n", max(start, searched))
                if newline == -1:
                    searched = len(buffer)
                    break
                line = bytes(buffer[start:newline])
                start = newline + 1
                if line.startswith(b"{"):
                    try:
                        reply = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(reply, dict):
                        replies.append(reply)
                elif line.startswith(b"cannot read"):
                    raise self._fail("Agda could not read the command")
            if start:
                del buffer[:start]
                searched, start = max(searched - start, 0), 0
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(f"the interaction lane did not answer within {self.timeout:g}s")
            if not readable(fd, remaining):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._fail("the interaction lane exited")
            received += len(chunk)
            if received > self.max_reply_bytes:
                raise self._fail(f"the reply was larger than {self.max_reply_bytes} bytes")
            buffer += chunk

    def _exchange(self, command: str) -> list[dict[str, Any]]:
        """Send one command to the running lane (never a fresh one: it would not hold the file)."""
        process = self._process
        if process is None or process.stdin is None:
            raise LaneError("the interaction lane is not running")
        try:
            process.stdin.write(command.encode("ascii") + b"\n")
            process.stdin.flush()
        except OSError:
            raise self._fail("the interaction lane exited") from None
        return self._until_prompt()

    def _load(self, file: Path) -> str:
        try:
            source = read_source(file)
            text = source.decode("utf-8")
        except InvalidInput as exc:
            raise LaneInputError(str(exc)) from None
        except UnicodeDecodeError:
            raise LaneInputError("not UTF-8 text", where=str(file)) from None
        try:
            header = module_header(tokens(text))
        except AgdaLexError as exc:
            raise LaneInputError(
                f"the file does not read as Agda: {exc}", where=str(file)
            ) from None
        if header.problem is not None:
            raise LaneInputError(header.problem, where=str(file))
        module = header.name or file.name.removesuffix(".agda")
        problem = module_problem(module, ".agda")
        if problem is not None:
            raise LaneInputError(f"refused {problem}", where=str(file))
        relative = module.replace(".", "/") + ".agda"
        toolchain = agda_toolchain_for(self.config, [text])  # the batch judge's, for this file
        if toolchain is None:
            raise LaneError("agda is not installed on this machine")
        self._start(toolchain)  # recycles first when due, which forgets what was loaded
        if self._loaded != (relative, source):
            self._loaded, self._points = None, []
            assert self._scratch is not None
            folder = self._scratch.path
            clear(folder)  # nothing of an earlier file stays importable
            stage(folder, {relative: source})
            path = haskell_string(f"{LANE_DIR}/{relative}")
            replies = self._exchange(f"IOTCM {path} NonInteractive Direct (Cmd_load {path} [])")
            error = _error(replies)
            if error:
                raise LaneInputError(f"the file does not load: {error}")
            points = [r for r in replies if r.get("kind") == "InteractionPoints"]
            if not points or not isinstance(points[-1].get("interactionPoints"), list):
                raise LaneError("the interaction lane did not list the file's holes")
            self._points = points[-1]["interactionPoints"]
            self._loaded = (relative, source)
        self.uses += 1
        return f"{LANE_DIR}/{relative}"

    def _point(self, line: int, column: int) -> int:
        for point in self._points:
            for span in point.get("range", []):
                start = span.get("start", {})
                if start.get("line") == line and start.get("col") == column:
                    return int(point["id"])
        raise LaneInputError(f"no hole opens at line {line}, column {column}")

    def _at(
        self, file: Path, line: int, column: int, command: str, argument: str
    ) -> list[dict[str, Any]]:
        """Agda's replies to ``command`` (``Cmd_infer Normalised``, ...) at the hole opening at
        ``line``:``column`` of ``file``, with ``argument`` (already a Haskell string)."""
        path = haskell_string(self._load(file))
        point = self._point(line, column)
        return self._exchange(
            f"IOTCM {path} NonInteractive Direct ({command} {point} noRange {argument})"
        )

    def goal(self, file: Path, line: int, column: int) -> Goal:
        """The goal type and context at the hole opening at ``line``:``column``."""
        replies = self._at(
            file, line, column, "Cmd_goal_type_context Normalised", haskell_string("")
        )
        info = _goal_info(replies)
        entries = tuple(
            ContextEntry(
                name=str(e.get("reifiedName", e.get("originalName", "?"))),
                type=str(e.get("binding", "")),
                in_scope=e.get("inScope") is not False,
            )
            for e in info.get("entries", [])
            if isinstance(e, dict)
        )
        return Goal(type=str(info.get("type", "")), context=entries)

    def infer(self, file: Path, line: int, column: int, term: str) -> str:
        """The type Agda infers for ``term`` in the scope of the hole; a question, not a check.

        The term reaches Agda exactly as given (see ``haskell_string``); one line of printable
        text, at most ``MAX_TERM_CHARS`` characters, else a LaneError.
        """
        _one_term(term, "infer")
        replies = self._at(file, line, column, "Cmd_infer Normalised", haskell_string(term))
        return str(_goal_info(replies).get("expr", ""))

    def objection(self, file: Path, line: int, column: int, term: str) -> str | None:
        """Agda's objection to ``term`` as the content of the hole, checked against its goal
        (``Cmd_goal_type_context_check``, which Agda runs in a throwaway state: nothing of the
        check stays in the lane), or None when it raises none. A question, not a verdict: None
        does not say the term fits (a check may leave metas and constraints it does not report).

        An objection is an error located in the term's own text (``1,1-5``): how Agda reports
        every parse, scope and type error of the expression. Any other error is none: Agda 2.6.x
        fails *after* a successful check whenever the elaboration mentions a meta
        (``__IMPOSSIBLE__`` in 2.6.4.3, ``no such meta variable`` in 2.6.2.2: it prints the term
        once the throwaway state is gone), which says nothing against the term. The term is
        validated as for ``infer``."""
        _one_term(term, "check")
        replies = self._at(
            file, line, column, "Cmd_goal_type_context_check AsIs", haskell_string(term)
        )
        error = _error(replies)
        if error is None:
            _goal_info(replies)  # an answer, or a LaneError
            return None
        if not _LOCATED.match(error):
            return None
        return " ".join(part.strip() for part in error.splitlines()[:4])[:600]

    def make_case(self, file: Path, line: int, column: int, variable: str) -> list[str]:
        """The clauses Agda's case split (``Cmd_make_case``) makes of the clause holding the hole
        when it splits on ``variable``: an answer (text to judge), never a verdict. A name that
        is not one identifier (blank, spaces, brackets, ``;``, ``.``, ``"``, control characters,
        more than ``MAX_TERM_CHARS``) is refused before Agda sees it (LaneInputError); Agda's
        refusal (not a variable, not a data type) is a TermRejected; a split Agda answers with
        anything but a function's clauses is a LaneError."""
        if (
            not variable
            or len(variable) > MAX_TERM_CHARS
            or any(not c.isprintable() or c.isspace() or c in '(){}[];."@' for c in variable)
        ):
            raise LaneInputError(f"not a variable name to split on: {variable!r}")
        replies = self._at(file, line, column, "Cmd_make_case", haskell_string(variable))
        error = _error(replies)
        if error:
            raise TermRejected(" ".join(part.strip() for part in error.splitlines()[:4])[:600])
        for reply in replies:
            if reply.get("kind") == "MakeCase":
                clauses = reply.get("clauses")
                if reply.get("variant") != "Function" or not isinstance(clauses, list):
                    raise TermRejected("the split is not one of a function's clauses")
                return [str(clause) for clause in clauses]
        raise LaneError("the interaction lane gave no case split")


def _one_term(term: str, verb: str) -> None:
    if not term.strip() or len(term) > MAX_TERM_CHARS:
        raise LaneInputError(
            f"a term to {verb} must be non-empty and at most {MAX_TERM_CHARS} chars"
        )
    if any(not c.isprintable() for c in term):
        raise LaneInputError(f"a term to {verb} must be one line of printable text")


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
        raise TermRejected(" ".join(line.strip() for line in error.splitlines()[:4])[:600])
    for reply in replies:
        info = reply.get("info")
        if isinstance(info, dict) and info.get("kind") == "GoalSpecific":
            goal_info = info.get("goalInfo")
            if isinstance(goal_info, dict):
                return goal_info
    raise LaneError("the interaction lane gave no answer")
