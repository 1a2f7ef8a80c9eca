"""Conformance: a checker must reproduce its contract's fixtures before it may judge.

A fixtures folder holds one folder per fixture, and nothing else but plain files (a README)::

    FIXTURE/artifacts/{role}/...     the submission's files
    FIXTURE/reference/{key}/...      the reference inputs (optional: see ``references``)
    FIXTURE/expected.json            {"result": "verified" | "refuted" | "inconclusive"}

The whole set is read and validated before anything runs: an empty set, a set in which every
fixture expects ``verified`` (an always-yes checker would conform to it), a fixture without a
valid ``expected.json``, an unknown entry, a role or key that is not a name, a symlink, a FIFO or
device, or a set larger than the staging limit is ``InvalidInput`` naming the path (exit 2), never
a vacuous "0/0 reproduced". Only ``artifacts/`` and ``reference/`` are staged into ``/input``:
``expected.json`` never is. A fixture passes when the checker runs cleanly and concludes exactly
the expected result.

A checker's identity (:func:`checker_digest`) is everything its conclusions depend on: its files,
command and limits, the fixture sets, the check's declared roles and reference keys and the
references' bytes, and the code of assay that runs and reads it (:func:`judging_code`).

Limits: a checker sees ``/input/manifest.json`` with every file's sha256, so a checker written to
recognise its published fixtures can answer them correctly and judge everything else as it
likes. Fixtures *held back* from the checker's author (:func:`conformance` ``held_back``) are
shaped exactly like submissions (every declared role, no ``reference/`` of their own) and run as
submissions are; they catch such a checker when it disagrees with one. They raise the cost of
lying, not make it impossible: sandboxed runs share the host kernel, and a checker written to
keep state across runs through host-shared caches (the page cache of a readable system file; no
namespace isolates it) can remember the held-back fixtures it was shown and lie only about work
it has never seen. The strong guarantee needs checkers from trusted authors, or a VM per run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, computed_field

from assay._config import DEFAULT_CONFIG
from assay._errors import InvalidInput
from assay._signed import SignedStore, canonical_digest, judging_code
from assay._strict import StrictJSONError, loads_strict
from assay._wire import WireModel, read_document
from assay.sandbox._limits import Limits
from assay.sandbox._protocol import (
    NAME,
    VERDICTS,
    InputTooLarge,
    _sha256,
    default_command,
    run_checker,
    with_result_channel,
)
from assay.sandbox._sandbox import Sandbox, configured_sandbox

PROTOCOL_VERSION = "assay.checker/1"
"""Part of every checker digest: a change to the protocol makes every checker conform again."""
EXPECTED_LIMIT = 64 * 1024
MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = DEFAULT_CONFIG.max_staged_mb * 1024 * 1024
"""The staging cap when a caller passes none: the default config's ``max_staged_mb``."""
SECTIONS = {"artifacts": "artifacts", "reference": "references"}


class FixtureResult(WireModel):
    """One fixture run: the document ``assay.fixture_result/1`` (``assay checker conform
    --json`` prints one per line; a stored conformance holds them too)."""

    schema_: Literal["assay.fixture_result/1"] = Field("assay.fixture_result/1", alias="schema")
    name: str
    """The fixture's folder name."""
    expected: str
    """What ``expected.json`` says: verified, refuted or inconclusive."""
    got: str
    """The checker's result, or ``error`` when it failed to conclude."""
    detail: str
    """The checker's summary, or why it failed to conclude (with the end of its output)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """The checker concluded exactly the expected result."""
        return self.expected == self.got


@dataclass(frozen=True)
class Fixture:
    """One validated fixture: its expected result and its groups (role/key -> folder)."""

    name: str
    expected: str
    artifacts: dict[str, Path]
    references: dict[str, Path] | None
    """None when the fixture brings no ``reference/`` folder (the check's own are used)."""


@dataclass(frozen=True)
class FixtureSet:
    """A checked, loaded fixture folder and the digest a conformance record is kept under."""

    fixtures: list[Fixture]
    digest: str
    """sha256 over every file's path, bytes and expected result: any change changes it."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file or folder"


def tree_listing(root: Path, max_bytes: int, *, links: bool = False) -> list[list[object]]:
    """Every entry under ``root`` as [path, kind, sha256 or target, executable], iteratively.

    Symlinks are listed by target when ``links`` (a checker folder: they are staged as links),
    else refused; FIFOs, devices and sockets are refused; more than ``max_bytes`` or
    ``MAX_ENTRIES`` entries is refused. Raises InvalidInput naming the path.
    """
    try:
        info = os.stat(root)  # the root itself was named by the author: it may be a link
    except OSError as exc:
        raise InvalidInput(f"cannot be read ({exc.strerror})", where=str(root)) from None
    if stat.S_ISREG(info.st_mode):
        _count(info.st_size, max_bytes, root)
        return [[root.name, "file", _sha256(root), bool(info.st_mode & 0o111)]]
    if not stat.S_ISDIR(info.st_mode):
        raise InvalidInput(f"{_kind(info.st_mode)}, not a file or folder", where=str(root))
    listing: list[list[object]] = []
    total = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            path = Path(entry.path)
            relative = path.relative_to(root).as_posix()
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                listing.append([relative, "dir", "", False])
                stack.append(path)
            elif stat.S_ISREG(mode):
                total += entry.stat(follow_symlinks=False).st_size
                _count(total, max_bytes, path)
                listing.append([relative, "file", _sha256(path), bool(mode & 0o111)])
            elif stat.S_ISLNK(mode) and links:
                listing.append([relative, "link", os.readlink(path), False])
            else:
                raise InvalidInput(
                    f"{_kind(mode)}: fixtures and checkers hold only plain files and folders",
                    where=str(path),
                )
            if len(listing) > MAX_ENTRIES:
                raise InvalidInput(f"more than {MAX_ENTRIES} entries", where=str(root))
    listing.sort(key=lambda row: str(row[0]))
    return listing


def _count(total: int, max_bytes: int, path: Path) -> None:
    if total > max_bytes:
        raise InvalidInput(f"larger than {max_bytes // (1024 * 1024)} MiB", where=str(path))


def _read_expected(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InvalidInput(
            'every fixture needs expected.json ({"result": ...})', where=str(path)
        ) from None
    except OSError as exc:
        raise InvalidInput(f"cannot be read safely ({exc.strerror})", where=str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidInput("must be a regular file", where=str(path))
        raw = os.read(fd, EXPECTED_LIMIT + 1)
    finally:
        os.close(fd)
    if len(raw) > EXPECTED_LIMIT:
        raise InvalidInput(f"larger than {EXPECTED_LIMIT} bytes", where=str(path))
    try:
        document = loads_strict(raw)
    except StrictJSONError as exc:
        raise InvalidInput(f"not strict JSON: {exc}", where=str(path)) from None
    result = document.get("result") if isinstance(document, dict) else None
    if result not in VERDICTS:
        raise InvalidInput(f"'result' must be one of {', '.join(VERDICTS)}", where=str(path))
    return str(result)


def _groups(folder: Path) -> dict[str, Path]:
    groups = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if not entry.is_dir(follow_symlinks=False):
            raise InvalidInput(
                f"{folder.name}/ holds one folder per name ({folder.name}/NAME/...)",
                where=entry.path,
            )
        if not NAME.fullmatch(entry.name):
            raise InvalidInput(
                "not a role or key name (letters, digits, _ . -, at most 64)", where=entry.path
            )
        groups[entry.name] = Path(entry.path)
    return groups


def load_fixtures(folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> FixtureSet:
    """Read and validate a whole fixture set before anything runs (InvalidInput on any defect)."""
    try:
        info = os.stat(folder)
    except OSError as exc:
        raise InvalidInput(f"cannot be read ({exc.strerror})", where=str(folder)) from None
    if not stat.S_ISDIR(info.st_mode):
        raise InvalidInput(
            f"the fixtures must be a folder, this is {_kind(info.st_mode)}", where=str(folder)
        )
    listing = tree_listing(folder.resolve(), max_bytes)
    fixtures = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_file(follow_symlinks=False):
            continue  # a README beside the fixtures
        fixture = Path(entry.path)
        for child in sorted(os.scandir(fixture), key=lambda e: e.name):
            if child.name not in ("artifacts", "reference", "expected.json"):
                raise InvalidInput(
                    "unexpected entry: a fixture holds artifacts/, reference/ and expected.json",
                    where=child.path,
                )
            if child.name in SECTIONS and not child.is_dir(follow_symlinks=False):
                raise InvalidInput("must be a folder", where=child.path)
        expected = _read_expected(fixture / "expected.json")
        artifacts = _groups(fixture / "artifacts") if (fixture / "artifacts").is_dir() else {}
        references = _groups(fixture / "reference") if (fixture / "reference").is_dir() else None
        fixtures.append(Fixture(entry.name, expected, artifacts, references))
    if not fixtures:
        raise InvalidInput(
            "no fixture folders found: an empty fixture set proves nothing", where=str(folder)
        )
    if all(f.expected == "verified" for f in fixtures):
        raise InvalidInput(
            "every fixture expects 'verified', so a checker that always says yes would conform: "
            "add at least one fixture whose expected result is refuted or inconclusive",
            where=str(folder),
        )
    return FixtureSet(fixtures, canonical_digest(listing))


def run_fixture(
    sandbox: Sandbox,
    command: list[str] | None,
    checker: Path | None,
    fixture: Fixture,
    limits: Limits,
    references: Mapping[str, Path] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> FixtureResult:
    """Run one fixture exactly as a submission is run; ``error`` when the checker fails."""
    groups = fixture.references if fixture.references is not None else dict(references or {})
    try:
        run = run_checker(sandbox, command, checker, fixture.artifacts, groups, limits, max_bytes)
    except InputTooLarge as exc:
        raise InvalidInput(str(exc), where=fixture.name) from None
    if run.failure is not None:
        tail = run.run.tail.strip().replace("\n", " | ")
        detail = f"{run.failure}: {tail[-200:]}" if tail else run.failure
        return FixtureResult(
            name=fixture.name, expected=fixture.expected, got="error", detail=detail
        )
    assert run.report.result is not None
    return FixtureResult(
        name=fixture.name,
        expected=fixture.expected,
        got=run.report.result,
        detail=run.report.summary,
    )


def _not_inside(checker: Path, folder: Path) -> None:
    if checker.is_dir() and checker.resolve() in (folder.resolve(), *folder.resolve().parents):
        raise InvalidInput(
            "the fixtures are inside the checker folder, so the checker could read every "
            "expected.json: keep them outside it",
            where=str(folder),
        )


def conform(
    checker: Path,
    fixtures: Path,
    command: list[str] | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    references: Mapping[str, Path] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    result_channel: str = "file",
) -> list[FixtureResult]:
    """Run ``checker`` against every fixture; InvalidInput for a malformed fixture set.

    ``result_channel``: "file" (/output/result.json) or "fd" (descriptor 3; see the ``program``
    kind), as the check will run it."""
    if not checker.exists():
        raise InvalidInput("the checker does not exist", where=str(checker))
    if result_channel not in ("file", "fd"):
        raise InvalidInput(f"result channel {result_channel!r}: use 'file' or 'fd'")
    if result_channel == "fd":
        command = with_result_channel(command or default_command(checker))
    tree_listing(checker, max_bytes, links=True)
    _not_inside(checker, fixtures)
    loaded = load_fixtures(fixtures, max_bytes)
    sandbox = sandbox or configured_sandbox(DEFAULT_CONFIG)
    return [
        run_fixture(sandbox, command, checker, f, limits or Limits(), references, max_bytes)
        for f in loaded.fixtures
    ]


class Conformance(WireModel):
    """Whether a checker (by digest) reproduced its fixtures and held-back fixtures: the
    document ``assay.conformance/1``, as the signed store keeps a passing one."""

    schema_: Literal["assay.conformance/1"] = Field("assay.conformance/1", alias="schema")
    digest: str
    """The checker's identity (see ``checker_digest``)."""
    results: list[FixtureResult]
    """The published fixtures, in name order."""
    held_back: list[FixtureResult] = Field(default_factory=list)
    """The fixtures held back from the checker's author (never named in an outcome)."""
    cached: bool = False
    """Read from the signed store: this exact digest passed before and was not run again."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Every fixture, published and held back, reproduced."""
        return all(r.passed for r in self.results + self.held_back)

    def describe(self) -> str:
        """How many fixtures reproduced; the first published failure by name. A held-back
        fixture is only ever counted: its name and expected result never leave the verifier."""
        every = self.results + self.held_back
        failed = [r for r in self.results if not r.passed]
        held_failed = sum(not r.passed for r in self.held_back)
        text = f"{len(every) - len(failed) - held_failed} of {len(every)} fixtures reproduced"
        if failed:
            first = failed[0]
            text += f" ({first.name!r}: expected {first.expected}, got {first.got})"
        if held_failed:
            text += f" ({held_failed} held-back fixture{'s' * (held_failed > 1)} disagreed)"
        return text

    def evidence(self) -> dict[str, object]:
        """What an outcome says about conformance: the checker's digest, whether it was cached, and counts only (held-back fixtures are never named)."""
        evidence: dict[str, object] = {"checker_digest": self.digest, "cached": self.cached}
        for label, rows in (("fixtures", self.results), ("held_back", self.held_back)):
            if rows:
                evidence[label] = f"{sum(r.passed for r in rows)}/{len(rows)}"
        return evidence


def checker_digest(
    checker: Path | None,
    command: Sequence[str],
    fixtures: str | None,
    held_back: str | None,
    limits: Limits,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    references: Mapping[str, Path] | None = None,
    roles: Collection[str] | None = None,
) -> str:
    """The checker's identity: its files, command, fixtures, limits, the check's declared roles
    and its references (keys and bytes), and the code of assay that runs and reads it. A
    conformance earned under other references, roles or another assay is not this one."""
    listed = {}
    for key, path in sorted((references or {}).items()):
        try:
            listed[key] = tree_listing(path, max_bytes, links=True)
        except InvalidInput as exc:
            raise InvalidInput(f"reference {key!r}: {exc}") from None
    return canonical_digest(
        {
            "protocol": PROTOCOL_VERSION,
            "assay": judging_code(),
            "checker": tree_listing(checker, max_bytes, links=True) if checker else None,
            "command": list(command),
            "fixtures": fixtures,
            "held_back": held_back,
            "limits": limits.model_dump(mode="json"),
            "roles": sorted(roles) if roles is not None else None,
            "references": listed,
        }
    )


def conformance(
    sandbox: Sandbox,
    checker: Path | None,
    command: list[str] | None,
    fixtures: Path | None,
    held_back: Path | None,
    limits: Limits,
    references: Mapping[str, Path],
    store: SignedStore | None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    roles: Collection[str] | None = None,
) -> tuple[Conformance, list[Fixture]]:
    """The checker's conformance, from the signed store when this exact digest passed before.

    Returns the held-back fixtures too, for the caller's spot checks. Only a full pass is
    stored; a failing checker runs its fixtures again next time (a fault may be passing).
    InvalidInput for a malformed fixture set, fixtures inside the checker folder, a reference
    that overlaps the held-back fixtures (the checker would read their expected results), a
    fixture with a role (or reference key) the check does not declare, or (with ``roles``) a
    held-back fixture not shaped exactly like a submission: every declared role and no
    ``reference/`` of its own. No submission looks otherwise, so a checker could tell it apart.
    """
    if command is None:
        assert checker is not None
        command = default_command(checker)
    sets = {}
    for label, folder in (("fixtures", fixtures), ("held_back", held_back)):
        if folder is not None:
            if checker is not None:
                _not_inside(checker, folder)
            sets[label] = load_fixtures(folder, max_bytes)
            if roles is not None:
                for fixture in sets[label].fixtures:
                    _declared(fixture, folder, roles, references)
                    if label == "held_back":
                        _like_a_submission(fixture, folder, roles)
    if held_back is not None:
        for key, path in references.items():
            if _overlap(path, held_back):
                raise InvalidInput(
                    f"reference {key!r} overlaps the held-back fixtures, so the checker could "
                    "read their expected results: keep them apart",
                    where=str(held_back),
                )
    held = sets["held_back"].fixtures if "held_back" in sets else []
    digest = checker_digest(
        checker,
        command,
        sets["fixtures"].digest if "fixtures" in sets else None,
        sets["held_back"].digest if "held_back" in sets else None,
        limits,
        max_bytes,
        references=references,
        roles=roles,
    )
    stored = _stored(store, digest)
    if stored is not None:
        return stored.model_copy(update={"cached": True}), held

    def run_all(name: str) -> list[FixtureResult]:
        if name not in sets:
            return []
        return [
            run_fixture(sandbox, command, checker, f, limits, references, max_bytes)
            for f in sets[name].fixtures
        ]

    result = Conformance(digest=digest, results=run_all("fixtures"), held_back=run_all("held_back"))
    if store is not None and result.passed:
        store.put(digest, result.to_json())
    return result, held


def _stored(store: SignedStore | None, digest: str) -> Conformance | None:
    """The stored pass of exactly this digest; anything else (another digest, a failure, a
    record of another schema or major) is a miss, so the checker runs its fixtures again."""
    if store is None:
        return None
    try:
        stored = read_document(Conformance, store.get(digest))
    except InvalidInput:
        return None
    return stored if stored.digest == digest and stored.passed else None


def _declared(
    fixture: Fixture, folder: Path, roles: Collection[str], keys: Collection[str]
) -> None:
    for section, names, declared in (
        ("artifacts", fixture.artifacts, roles),
        ("reference", fixture.references or {}, keys),
    ):
        for name in names:
            if name not in declared:
                raise InvalidInput(
                    f"{section}/{name} is not declared by the check ({', '.join(declared)})",
                    where=str(folder / fixture.name),
                )


def _like_a_submission(fixture: Fixture, folder: Path, roles: Collection[str]) -> None:
    where = str(folder / fixture.name)
    missing = sorted(set(roles) - set(fixture.artifacts))
    if missing:
        raise InvalidInput(
            f"a held-back fixture must provide every declared role, like a submission; "
            f"artifacts/{missing[0]} is missing",
            where=where,
        )
    if fixture.references is not None:
        raise InvalidInput(
            "a held-back fixture has no reference/ of its own: it is judged under the check's "
            "references, exactly as a submission is",
            where=where,
        )


def _overlap(one: Path, other: Path) -> bool:
    """Whether one path is, contains or lies inside the other (symlinks resolved)."""
    a, b = one.resolve(), other.resolve()
    return a == b or a in b.parents or b in a.parents
