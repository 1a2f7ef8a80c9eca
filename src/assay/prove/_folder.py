"""``assay prove DIR``: every ``.agda`` obligation in a folder, in parallel, into one report.

The folder's top-level ``*.agda`` files are the obligations (sub-folders, e.g. ``solutions/``,
are not); each file's holes are its obligations. An optional ``obligations.json`` manifest says,
per file, whether it is a canary (a false statement: it must never be solved), whether its
intended solution is one term of the fixed vocabulary from its own imports (``single_term``: the
action space's ceiling, known before any run), its originals (excluded from retrieval) and the library lemma its intended
solution names (``lemma``: the recall instrument's target). Files are only read; the search works
on private copies. ``jobs`` obligations run at once, over disjoint copies; depth stays serial.
"""

from __future__ import annotations

import shlex
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from assay._config import DEFAULT_CONFIG, Config
from assay._errors import InvalidInput, ToolchainMissing
from assay._files import read_regular_text
from assay._wire import WireModel
from assay.proofs import Judging, agda_toolchain, agda_toolchain_for, proof_language
from assay.prove._casesplit import RECURSIVE_VOCABULARY
from assay.prove._fixture import enclosing, holes, imports, signature
from assay.prove._ledger import Controls, ObligationLedger, ProveReport
from assay.prove._moves import VOCABULARY
from assay.prove._retrieval import TOP_K, pool, rank
from assay.prove._search import Meta, Settings, prove_text

MANIFEST = "obligations.json"
MAX_OBLIGATION_BYTES = 1024 * 1024
MAX_OBLIGATIONS = 10_000


class Entry(WireModel):
    """What the manifest says about one obligation file."""

    canary: bool = False
    single_term: bool | None = None
    """Whether the intended solution is one term of the fixed vocabulary (a closer, an assumption,
    or a lemma the fixture names: bare, applied to underscores, or saturated with variables in
    scope): the action space's ceiling. A single term outside it (``cong suc p``) is ``false``."""
    originals: list[str] = Field(default_factory=list)
    lemma: str | None = None
    """The library lemma the intended solution names, as the fixture names it."""
    solution: str | None = None
    """The intended solution's file, relative to the folder."""


class Manifest(WireModel):
    """``obligations.json``: per file name, its ``Entry``."""

    schema_: Literal["assay.obligations/1"] = Field("assay.obligations/1", alias="schema")
    obligations: dict[str, Entry]


def read_manifest(folder: Path) -> Manifest | None:
    """The folder's manifest, None when it has none; InvalidInput naming the field otherwise."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    import json

    try:
        data = json.loads(read_regular_text(path, MAX_OBLIGATION_BYTES, "manifest"))
        return Manifest.model_validate(data)
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise InvalidInput(first["msg"], where=f"{path}: {where}") from None
        raise InvalidInput(f"not JSON: {exc}", where=str(path)) from None


def obligation_files(folder: Path) -> list[Path]:
    """The folder's top-level ``.agda`` files, by name; InvalidInput when there are none."""
    if not folder.is_dir():
        raise InvalidInput("not a folder", where=str(folder))
    files = sorted(p for p in folder.iterdir() if p.suffix == ".agda" and p.is_file())
    if not files:
        raise InvalidInput("no .agda obligation files in the folder", where=str(folder))
    if len(files) > MAX_OBLIGATIONS:
        raise InvalidInput(f"more than {MAX_OBLIGATIONS} obligation files", where=str(folder))
    return files


def load(folder: Path) -> list[tuple[str, str, Meta]]:
    """(name, text, meta) of every obligation, read and checked before any judgment: a file
    that is not UTF-8 text or has no hole, or a manifest naming a missing file, is the caller's
    input error."""
    manifest = read_manifest(folder)
    entries = manifest.obligations if manifest else {}
    files = obligation_files(folder)
    names = {p.name for p in files}
    for name in entries:
        if name not in names:
            raise InvalidInput(f"names {name!r}, which is not an obligation here", where=MANIFEST)
    loaded = []
    for path in files:
        text = read_regular_text(path, MAX_OBLIGATION_BYTES, "obligation")
        if not holes(text):
            raise InvalidInput("has no {! !} hole: nothing to prove", where=str(path))
        entry = entries.get(path.name, Entry())
        meta = Meta(entry.canary, entry.single_term, tuple(entry.originals), entry.lemma)
        loaded.append((path.name, text, meta))
    return loaded


def library_of(config: Config) -> str:
    """The agda-stdlib the judging toolchain reads (its sources are what retrieval ranks)."""
    found = agda_toolchain(config)
    return found.search_path[0] if found and found.search_path else config.agda_stdlib


def recall(obligations: list[tuple[str, str, Meta]], library: str) -> dict[str, float | int | None]:
    """The recall instrument, offline: for each obligation whose intended solution names a
    library lemma, that lemma's rank in the retriever's list (exclusion off: the question is
    whether ranking finds it); recall@8 and the median rank."""
    ranks: list[int] = []
    missing = 0
    for _, text, meta in obligations:
        if meta.lemma is None or meta.canary:
            continue
        first = holes(text)[0][0]
        own = enclosing(text, first)
        ranked = rank(signature(text, own) if own else "", pool(library, imports(text)))
        found = next((r.rank for r in ranked if r.qualified == meta.lemma), None)
        if found is None:
            missing += 1
        else:
            ranks.append(found)
    n = len(ranks) + missing
    return {
        "n": n,
        "recall_at_8": None if not n else sum(r <= TOP_K for r in ranks) / n,
        "median_rank": statistics.median(ranks) if ranks else None,
        "not_in_pool": missing,
    }


def fallback_of(config: Config, obligations: list[tuple[str, str, Meta]]) -> str:
    """Which obligations the fallback Agda judges (under ``auto``: Debian's, for a file that
    imports a module the PyPI Agda's library lacks), so the report names every Agda that judged:
    "<version> judges <files>", or "none"."""
    default = agda_toolchain(config)
    files = [
        name
        for name, text, _ in obligations
        if default is not None
        and (chosen := agda_toolchain_for(config, [text])) is not None
        and chosen.binary != default.binary
    ]
    if default is None or default.fallback is None or not files:
        return "none"
    return f"{default.fallback.version} ({default.fallback.binary}) judges {', '.join(files)}"


def prove_folder(
    folder: Path,
    judging: Judging,
    *,
    retrieval: bool = False,
    exclusion: bool = True,
    filter: bool = True,
    case_split: bool = False,
    jobs: int = 1,
    on_done: Callable[[ObligationLedger], None] | None = None,
) -> ProveReport:
    """Run the loop over every obligation in ``folder`` (see the module's docstring)."""
    if jobs < 1:
        raise InvalidInput("must be at least 1", where="jobs")
    start = time.monotonic()
    obligations = load(folder)
    config = judging.config or DEFAULT_CONFIG
    if agda_toolchain(config) is None:
        raise ToolchainMissing(f"no Agda for agda_toolchain={config.agda_toolchain!r} here")
    settings = Settings(
        judging, retrieval, exclusion, filter, case_split=case_split, library=library_of(config)
    )

    def one(item: tuple[str, str, Meta]) -> ObligationLedger:
        row = prove_text(item[0], item[1], item[2], settings)
        if on_done is not None:
            on_done(row)
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool_:
        rows = list(pool_.map(one, obligations))
    toolchain = agda_toolchain(config)
    counted = [r for r in rows if not r.canary]
    canaries = [r for r in rows if r.canary]
    stated = [r.single_term for r in counted]
    return ProveReport(
        action_space=[
            *VOCABULARY,
            *(["retrieval: top 8 in-scope library rows"] if retrieval else []),
            *(RECURSIVE_VOCABULARY if case_split else ()),
        ],
        toolchain={
            "binary": toolchain.binary if toolchain else "none",
            "command": shlex.join(toolchain.command) if toolchain else "none",
            "version": toolchain.version if toolchain else "none",
            "library": toolchain.library if toolchain else "none",
            "language": proof_language("agda").name,
            "fallback": fallback_of(config, obligations),
        },
        solved=sum(r.status == "solved" for r in counted),
        total=len(counted),
        ceiling=None if all(s is None for s in stated) else sum(bool(s) for s in stated),
        errors=sum(r.status == "error" for r in rows),
        canaries=len(canaries),
        canaries_solved=sum(r.status == "solved" for r in canaries),
        obligations=rows,
        controls=Controls(
            retrieval=retrieval,
            exclusion=exclusion,
            filter=filter,
            case_split=case_split,
            judgments=sum(r.judgments for r in rows),
            filtered=sum(r.filtered for r in rows),
            recall=recall(obligations, settings.library) if retrieval else None,
        ),
        timing={"wall_ms": int((time.monotonic() - start) * 1000), "jobs": jobs},
    )
