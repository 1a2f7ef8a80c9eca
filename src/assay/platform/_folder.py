"""Reading a problem folder (``problem.yaml`` plus the files it names) into a draft to publish.

The folder is the public format authors write (docs/problems.md). It is read completely and
checked completely before anything is stored: every defect found is one line naming the file and
the key, and all of them are reported at once, so an author fixes a folder in one pass.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from assay._errors import InvalidInput
from assay._files import read_regular
from assay._wire import WireModel
from assay.checks import build_check
from assay.platform._contract import (
    Contract,
    ExternalStage,
    Moment,
    Name,
    ReferenceKey,
    ReviewStage,
    Role,
    SandboxStage,
    head,
)
from assay.platform._revision import Policy
from assay.review import load_yaml, parse_protocol, protocol_problems

PROBLEM_FILE = "problem.yaml"
MAX_PROBLEM_FILE = 1024 * 1024
"""problem.yaml is prose and structure; a larger one is not a problem folder."""


class FolderInvalid(InvalidInput):
    """A problem folder with defects; ``lines`` holds one line per defect."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


class _Authored(WireModel):
    model_config = ConfigDict(extra="forbid")


class _Reference(_Authored):
    key: Name
    path: str = Field(min_length=1)
    sealed_until: Moment | None = None
    description: str | None = None


class _Contract(_Authored):
    roles: list[Role] = Field(default_factory=list)
    references: list[_Reference] = Field(default_factory=list)
    acceptance: str = Field(min_length=1, max_length=20_000)
    stages: list[dict[str, Any]] = Field(min_length=1)
    conformance: dict[str, str] = Field(default_factory=dict)
    """Checker (its reference key, or the path that reference names) -> fixtures folder."""
    verifier: Name | None = None


class _Problem(_Authored):
    id: Name
    title: str = Field(min_length=1, max_length=300)
    statement: str = Field(min_length=1)
    skills: list[str] = Field(default_factory=list)
    contract: _Contract | None = None
    policy: Policy = Field(default_factory=Policy)


@dataclass
class Draft:
    """A problem folder read and checked: the contract, and the files the revision binds."""

    folder: Path
    problem: str
    title: str
    statement: Path
    policy: Policy
    contract: Contract | None
    skills: dict[str, Path] = field(default_factory=dict)
    references: dict[str, Path] = field(default_factory=dict)
    """Key -> file or folder; a sealed one may be absent in a participant's copy (preflight)."""
    sealed: dict[str, datetime] = field(default_factory=dict)
    fixtures: dict[str, Path] = field(default_factory=dict)
    """Checker reference key -> its conformance fixtures folder."""


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _validation_lines(exc: ValidationError, file: str, prefix: str = "") -> list[str]:
    lines = []
    for error in exc.errors():
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p in _UNION_TAGS))
        key = _where(loc)
        key = f"{prefix}.{key}" if prefix and key else (prefix or key)
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key (a typo would silently change the problem)"
        lines.append(f"{file}: {key}: {message}" if key else f"{file}: {message}")
    return lines


_UNION_TAGS = {"sandbox", "review", "external"}


def read_problem_yaml(folder: Path) -> Any:
    """The parsed problem.yaml (safe YAML, no aliases, no duplicate keys)."""
    data = read_regular(folder / PROBLEM_FILE, MAX_PROBLEM_FILE, PROBLEM_FILE)
    try:
        return load_yaml(data, PROBLEM_FILE)
    except InvalidInput as exc:
        raise FolderInvalid([str(exc)]) from None


def inside(folder: Path, relative: str, *, need: str, optional: bool = False) -> Path | str:
    """``relative`` as a path inside ``folder``, or the reason it is not one.

    ``need`` is "file", "folder" or "any". No absolute paths, no ``..``, no symlink anywhere on
    the way (a link could point at the host's files, and they would be published)."""
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or "\\" in relative:
        return "must be a relative path inside the problem folder (no '..', no leading '/')"
    if "\0" in relative:
        return "holds a NUL character, which no file name can"
    current = folder
    for part in pure.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return "" if optional else "does not exist"
        except OSError as exc:
            return f"cannot be read ({exc.strerror})"
        if stat.S_ISLNK(mode):
            return "is a symbolic link: copy the file into the folder instead"
    if need == "file" and not stat.S_ISREG(mode):
        return "must be a regular file"
    if need == "folder" and not stat.S_ISDIR(mode):
        return "must be a folder"
    if need == "any" and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "must be a regular file or a folder"
    return current


def load_folder(folder: Path, *, participant_copy: bool = False) -> Draft:
    """Read and check a problem folder; FolderInvalid lists every defect, one per line.

    ``participant_copy``: the folder a participant has (for preflight), where sealed references
    may be absent."""
    if not folder.is_dir():
        raise InvalidInput("is not a folder", where=str(folder))
    raw = read_problem_yaml(folder)
    if not isinstance(raw, dict):
        raise FolderInvalid([f"{PROBLEM_FILE}: must be a mapping of keys (id, title, ...)"])
    try:
        parsed = _Problem.model_validate(raw)
    except ValidationError as exc:
        raise FolderInvalid(_validation_lines(exc, PROBLEM_FILE)) from None
    lines: list[str] = []

    def place(relative: str, key: str, need: str, optional: bool = False) -> Path | None:
        found = inside(folder, relative, need=need, optional=optional)
        if isinstance(found, str):
            if found:
                lines.append(f"{PROBLEM_FILE}: {key}: {relative!r} {found}")
            return None
        return found

    statement = place(parsed.statement, "statement", "file")
    skills = {}
    for i, skill in enumerate(parsed.skills):
        found = place(skill, f"skills[{i}]", "file")
        if found is not None:
            skills[skill] = found
    draft = Draft(
        folder=folder,
        problem=parsed.id,
        title=parsed.title,
        statement=statement or folder,
        policy=parsed.policy,
        contract=None,
        skills=skills,
    )
    if parsed.contract is not None:
        draft.contract = _contract(parsed.contract, draft, place, lines, participant_copy)
    if lines:
        raise FolderInvalid(lines)
    return draft


def _contract(
    authored: _Contract, draft: Draft, place: Any, lines: list[str], participant_copy: bool
) -> Contract | None:
    by_path: dict[str, str] = {}
    for i, ref in enumerate(authored.references):
        sealed = ref.sealed_until is not None
        found = place(
            ref.path, f"contract.references[{i}].path", "any", optional=sealed and participant_copy
        )
        if found is not None:
            draft.references[ref.key] = found
        if ref.sealed_until is not None:
            draft.sealed[ref.key] = ref.sealed_until
        by_path[ref.path.rstrip("/")] = ref.key
    keys = [r.key for r in authored.references]
    conformance = []
    for checker, fixtures in authored.conformance.items():
        key = checker if checker in keys else by_path.get(checker.rstrip("/"))
        where = f"contract.conformance.{checker}"
        if key is None:
            lines.append(
                f"{PROBLEM_FILE}: {where}: names neither a reference key nor a reference's "
                "path: declare the checker as a reference first"
            )
            continue
        found = place(fixtures, where, "folder")
        if found is not None:
            draft.fixtures[key] = found
        conformance.append(key)
    roles = [r.name for r in authored.roles]
    files = {key for key, path in draft.references.items() if path.is_file()}
    stages: list[SandboxStage | ReviewStage | ExternalStage] = []
    for i, raw in enumerate(authored.stages):
        stage = _stage(_with_protocol(raw, i, draft.folder, lines), i, lines)
        if stage is None:
            continue
        stages.append(stage)
        if isinstance(stage, SandboxStage):
            for j, check in enumerate(stage.checks):
                _check(check, f"contract.stages[{i}].checks[{j}]", keys, roles, lines, files)
    try:
        return Contract(
            roles=authored.roles,
            references=[
                ReferenceKey(key=r.key, description=r.description) for r in authored.references
            ],
            acceptance=authored.acceptance,
            stages=stages or authored.stages,
            conformance=conformance,
            verifier=authored.verifier,
        )
    except ValidationError as exc:
        found = _validation_lines(exc, PROBLEM_FILE, "contract")
        if len(stages) < len(authored.stages):  # each refused stage has its line already
            found = [x for x in found if not x.startswith(f"{PROBLEM_FILE}: contract.stages")]
        lines.extend(found)
        return None


MAX_PROTOCOL_FILE = 256 * 1024
"""A review protocol is a small graph; a larger file is not one."""


def _with_protocol(raw: dict[str, Any], i: int, folder: Path, lines: list[str]) -> dict[str, Any]:
    """A review stage with its protocol read (a path in the folder, safe YAML) and validated in
    full (``assay.review``), stored in the contract as the parsed graph, so the contract's id
    covers every rule a reviewer works under. Other stages pass through."""
    if raw.get("type") != "review" or "protocol" not in raw:
        if raw.get("type") == "review":
            lines.append(
                f"{PROBLEM_FILE}: contract.stages[{i}].protocol: a review stage names its "
                "protocol (a YAML file in the folder; docs/review.md)"
            )
        return raw
    given = raw["protocol"]
    where = f"contract.stages[{i}].protocol"
    name = PROBLEM_FILE
    if isinstance(given, str):
        found = inside(folder, given, need="file")
        if isinstance(found, str):
            lines.append(f"{PROBLEM_FILE}: {where}: {given!r} {found}")
            return {**raw, "protocol": None}
        name = given
        try:
            given = load_yaml(read_regular(found, MAX_PROTOCOL_FILE, given), given)
        except InvalidInput as exc:
            lines.append(f"{PROBLEM_FILE}: {where}: {exc}")
            return {**raw, "protocol": None}
    problems = protocol_problems(given, name if name != PROBLEM_FILE else f"{name}: {where}")
    if problems:
        lines.extend(problems)
        return {**raw, "protocol": None}
    return {**raw, "protocol": parse_protocol(given).to_json()}


def _stage(
    raw: dict[str, Any], i: int, lines: list[str]
) -> SandboxStage | ReviewStage | ExternalStage | None:
    kind = raw.get("type")
    models = {"sandbox": SandboxStage, "review": ReviewStage, "external": ExternalStage}
    model = models.get(kind) if isinstance(kind, str) else None  # a list or mapping: no type
    where = f"contract.stages[{i}]"
    if model is None:
        lines.append(f"{PROBLEM_FILE}: {where}.type: must be sandbox, review or external")
        return None
    try:
        return model.model_validate(raw)  # type: ignore[attr-defined, no-any-return]
    except ValidationError as exc:
        lines.extend(_validation_lines(exc, PROBLEM_FILE, where))
        return None


def _check(
    raw: dict[str, Any],
    where: str,
    keys: list[str],
    roles: list[str],
    lines: list[str],
    files: set[str],
) -> None:
    """A check spec that its kind accepts and that names only declared keys and roles."""
    try:
        check = build_check(raw, where)
    except InvalidInput as exc:
        lines.append(f"{PROBLEM_FILE}: {exc}")
        return
    spec = check.spec
    if check.kind.name == "program":
        checker = getattr(spec, "checker", None)
        if checker is None:
            lines.append(
                f"{PROBLEM_FILE}: {where}.checker: in a contract a program check names its "
                "checker (a reference key), so the checker's bytes are bound by the revision "
                "and must reproduce its conformance fixtures before it may judge"
            )
        if checker in files and getattr(spec, "command", None) is None:
            lines.append(
                f"{PROBLEM_FILE}: {where}.checker: {checker!r} is bound to a single file, which "
                "checks see as /checker without its name or an executable bit: give 'command' "
                "(e.g. [python3, /checker]) or bind the checker's folder and name the file in it"
            )
        for name in ("fixtures", "held_back_fixtures"):
            if getattr(spec, name, None) is not None:
                lines.append(
                    f"{PROBLEM_FILE}: {where}.{name}: in a contract, fixtures are given in "
                    "contract.conformance (the platform runs them when it publishes)"
                )
    for value in spec.verifier_files():
        if _climbs(value) or head(value) not in keys:
            lines.append(
                f"{PROBLEM_FILE}: {where}: {value!r} is not a reference key (or a path inside "
                "one, without '..'); in a contract a check names references by key "
                f"(declared: {', '.join(keys) or 'none'})"
            )
    for value in spec.workspace_files():
        if _climbs(value) or head(value) not in roles:
            lines.append(
                f"{PROBLEM_FILE}: {where}: {value!r} is not a role (or a path inside one, "
                "without '..'); in a contract a check names artifacts by role "
                f"(declared: {', '.join(roles) or 'none'})"
            )


def _climbs(value: str) -> bool:
    """A path that could leave the key or role it starts with: absolute, with a '..' part, a
    backslash or a NUL (a check must read inside what it names, never beside it)."""
    pure = PurePosixPath(value)
    return pure.is_absolute() or ".." in pure.parts or "\\" in value or "\0" in value
