"""JSON Schemas (draft 2020-12) of every document assay writes, generated into ``docs/schemas/``.

Run ``scripts/schemas`` (``python -m assay.cli._schemas``) after changing a wire model;
``tests/test_wire.py`` fails while the files are stale, and validates every JSON assay emits
against them. Each schema is pydantic's serialization-mode schema of the model (what
``to_json()`` writes, computed fields included), made strict where the model is: every field a
document always carries is required, and an object with declared properties admits no others
(free-form objects such as ``evidence`` stay open).

The checker protocol's files (``/input/manifest.json``, ``/output/result.json``) are read and
written by third-party checker programs; their schemas are kept by hand beside the protocol, in
``src/assay/sandbox/schemas/``, and are not generated here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from assay._wire import WireModel, document_id
from assay.checks import AnswerKeyScore
from assay.cli._render import KindList
from assay.episodes import EpisodeResult
from assay.ledger import ChainReport
from assay.platform import (
    CampaignView,
    ClaimView,
    Contract,
    Preflight,
    ProblemView,
    Published,
    RespondView,
    ReviewRecord,
    Revision,
    Revocation,
    RunView,
    SeatsView,
    SubmissionView,
    UserView,
    VerifierView,
)
from assay.proofs import Goal, HoleResult, Verdict
from assay.prove import Manifest, ProveReport
from assay.review import Protocol, ReviewReport
from assay.sandbox import Conformance, FixtureResult
from assay.status import Report

DOCUMENTS: tuple[tuple[type[WireModel], str], ...] = (
    (Report, "`assay check` (one per task, per line); `Report.to_json()`"),
    (AnswerKeyScore, "`assay verify` (the id lists with `--detail`)"),
    (EpisodeResult, "one item's verdict: `assay batch` (one per line), `/v1/verify` `results`"),
    (KindList, "`assay kinds --json`"),
    (FixtureResult, "`assay checker conform --json` (one per fixture, per line)"),
    (Conformance, "a passing conformance, as the signed store keeps it"),
    (HoleResult, "`assay hole fill`"),
    (Goal, "`assay hole goal` (an answer, never a verdict)"),
    (Verdict, "a proof judgment (in `hole fill`, in proof kinds' evidence, in the judgment cache)"),
    (ChainReport, "`assay ledger verify --json`"),
    (Contract, "a contract, as the ledger stores it (its id is the sha256 of this JSON)"),
    (Revision, "a revision, as the ledger stores it (its id is the sha256 of this JSON)"),
    (Published, "`assay problem publish --json`"),
    (ProblemView, "`assay problem show --json`"),
    (RunView, "`assay submit --json`, `assay recheck --json`, `assay external record --json`"),
    (SubmissionView, "`assay show --json`, `assay withdraw --json`, `assay nominate --json`"),
    (Revocation, "`assay revoke --json`"),
    (Preflight, "`assay preflight --json` (not verification)"),
    (Protocol, "a review protocol, as a contract's review stage stores it (docs/review.md)"),
    (UserView, "`assay user add --json`"),
    (SeatsView, "`assay review seats --json`"),
    (ClaimView, "`assay review claim --json`"),
    (RespondView, "`assay review respond --json`"),
    (ReviewRecord, "`assay review show --json`"),
    (CampaignView, "`assay review campaign create --json`, `assay review campaign show --json`"),
    (ReviewReport, "`assay review report --json`"),
    (VerifierView, "`assay verifier show --json`"),
    (ProveReport, "`assay prove --json` (every field but `timing` reproducible byte for byte)"),
    (Manifest, "a proof benchmark folder's `obligations.json` (read by `assay prove`)"),
)
"""Every top-level document, and where assay writes it."""

DRAFT = "https://json-schema.org/draft/2020-12/schema"
FOLDER = Path(__file__).resolve().parents[3] / "docs" / "schemas"


def file_name(model: type[WireModel]) -> str:
    """``assay.report/1`` is written to ``report.json``."""
    return document_id(model).removeprefix("assay.").partition("/")[0] + ".json"


def schema_of(model: type[WireModel]) -> dict[str, Any]:
    """The document's JSON Schema: ``$schema`` and ``$id`` (its ``schema`` value) first."""
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    for node in [schema, *schema.get("$defs", {}).values()]:
        _close(node)
    required = schema.setdefault("required", [])
    if "schema" not in required:  # a reader needs it first, even where other fields may go
        required.insert(0, "schema")
    return {"$schema": DRAFT, "$id": document_id(model), **schema}


def _close(node: dict[str, Any]) -> None:
    if "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False


def rendered() -> dict[str, str]:
    """File name -> text of every file under ``docs/schemas/``, the index included."""
    files = {
        file_name(model): json.dumps(schema_of(model), indent=2, ensure_ascii=False) + "\n"
        for model, _ in DOCUMENTS
    }
    files["README.md"] = _index()
    return files


def _index() -> str:
    lines = [
        "# Wire documents",
        "",
        "Generated by `scripts/schemas` from the models; do not edit by hand.",
        "",
        "Every JSON document assay writes names itself in its `schema` field,",
        '`"assay.<document>/<major>"`. Field names are snake_case. Adding an optional field keeps',
        "the major; renaming or removing a field, or changing what one means, bumps it, and a",
        "reader refuses a major it does not know (`assay._wire.read_document`).",
        "",
        "| `schema` | file | written by |",
        "|---|---|---|",
    ]
    for model, where in DOCUMENTS:
        lines.append(
            f"| `{document_id(model)}` | [{file_name(model)}]({file_name(model)}) | {where} |"
        )
    lines += [
        "",
        "The checker protocol (`/input/manifest.json`, `/output/result.json`) is a contract with",
        "third-party checker programs; its schemas are kept beside the protocol, in",
        "[src/assay/sandbox/schemas/](../../src/assay/sandbox/schemas/).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the schemas into ``docs/schemas/`` (``--check``: exit 1 if they are stale)."""
    args = sys.argv[1:] if argv is None else argv
    files = rendered()
    stale = sorted(
        name
        for name, text in files.items()
        if not (FOLDER / name).is_file() or (FOLDER / name).read_text() != text
    )
    extra = (
        sorted(p.name for p in FOLDER.glob("*") if p.name not in files) if FOLDER.is_dir() else []
    )
    if "--check" in args:
        for name in stale + extra:
            print(f"docs/schemas/{name} is stale: run scripts/schemas", file=sys.stderr)
        return 1 if stale or extra else 0
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name in extra:
        (FOLDER / name).unlink()
    for name in stale:
        (FOLDER / name).write_text(files[name])
    print(f"docs/schemas: {len(stale)} written, {len(extra)} removed, {len(files)} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
