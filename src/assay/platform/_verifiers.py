"""Verifier families: a *verifier* is a named family of contract versions ("extraction
fidelity"); each contract that names it (``verifier: NAME``) is one version, in the order the
ledger first stored them. Everything here is derived from the ledger: the versions, the revisions
pinning each, the checker programs (by digest) that conformed, and the revocations that touch
them. Nothing is stored for a family, so a new contract naming an existing verifier is its next
version by being published, and no record of a family can disagree with its contracts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from assay._errors import InvalidInput
from assay._wire import WireModel
from assay.ledger import Ledger
from assay.platform import _records as r
from assay.platform._contract import NAME


class PinningRevision(WireModel):
    """A revision of a problem that binds this contract version."""

    revision: str
    problem: str
    published: datetime


class Implementation(WireModel):
    """A checker program (by digest) and how it fared against the fixtures of one revision."""

    checker: str
    """``program:<sha256>``: what a revocation names."""
    key: str
    revision: str
    conformed: bool
    detail: str


class ContractVersion(WireModel):
    """One contract version of the family."""

    version: int
    contract: str
    published: datetime
    problem: str | None
    revisions: list[PinningRevision]
    implementations: list[Implementation]


class RevokedImplementation(WireModel):
    """A revocation that touches the family: the checker, why, by whom, when."""

    checker: str
    why: str
    by: str
    at: datetime
    problems: list[str] | None


class VerifierView(WireModel):
    """A verifier family as the ledger holds it."""

    schema_: Literal["assay.verifier/1"] = Field("assay.verifier/1", alias="schema")
    verifier: str
    versions: list[ContractVersion]
    conformed: list[str]
    """Checker programs that conformed for some version and are not revoked for the problem
    of the revision they conformed on."""
    revoked: list[RevokedImplementation]


def verifier_view(ledger: Ledger, name: str) -> VerifierView:
    """The family ``name``: InvalidInput (naming NAME) when no contract names it."""
    if not NAME.fullmatch(name):
        raise InvalidInput(
            f"{name!r} is not a verifier name (letters, digits, _ . -)", where="NAME"
        )
    contracts = [e for e in ledger.find(kind=r.CONTRACT) if e.body.get("verifier") == name]
    if not contracts:
        raise InvalidInput(
            f"no contract names verifier {name!r} (a problem's contract says 'verifier: {name}')",
            where="NAME",
        )
    ids = {e.subject for e in contracts}
    pinning: dict[str, dict[str, PinningRevision]] = {cid: {} for cid in ids}
    for entry in ledger.find(kind=r.REVISION):
        cid = entry.body.get("contract")
        if cid in ids and entry.subject not in pinning[cid]:
            pinning[cid][entry.subject] = PinningRevision(
                revision=entry.subject, problem=entry.problem or "", published=entry.at
            )
    versions = []
    checkers: set[str] = set()
    for number, entry in enumerate(contracts, 1):
        cid = entry.subject
        found = []
        for rid in pinning[cid]:
            for conf in ledger.find(kind=r.CONFORMANCE, subject=rid):
                body = r.ConformanceRecord.model_validate(conf.body)
                checkers.add(body.checker)
                found.append(
                    Implementation(
                        checker=body.checker,
                        key=body.key,
                        revision=rid,
                        conformed=body.passed,
                        detail=body.detail,
                    )
                )
        versions.append(
            ContractVersion(
                version=number,
                contract=cid,
                published=entry.at,
                problem=entry.problem,
                revisions=list(pinning[cid].values()),
                implementations=found,
            )
        )
    # A revocation covers the problems its author managed: one touches the family only where
    # it covers a problem pinning one of its versions (another manager's revocation of the
    # same program on their own problems says nothing about this family's).
    problem_of = {p.revision: p.problem for found in pinning.values() for p in found.values()}
    family = set(problem_of.values())
    stage_prefixes = tuple(f"{kind}:{cid}/" for cid in ids for kind in ("review", "rule"))
    touching = [
        e
        for e in ledger.find(kind=r.REVOKED)
        if (e.subject in checkers or e.subject.startswith(stage_prefixes))
        and any(r.revokes(e.body, problem) for problem in family)
    ]
    revoked = [
        RevokedImplementation(
            checker=e.subject,
            why=e.body["why"],
            by=e.body["by"],
            at=e.at,
            problems=e.body.get("problems"),
        )
        for e in touching
    ]
    conformed = sorted(
        {
            i.checker
            for v in versions
            for i in v.implementations
            if i.conformed
            and not any(
                e.subject == i.checker and r.revokes(e.body, problem_of.get(i.revision))
                for e in touching
            )
        }
    )
    return VerifierView(verifier=name, versions=versions, conformed=conformed, revoked=revoked)
