"""Retrieval in a real run (agda-stdlib, slow): the exclusion is applied and named in the ledger
(the excluded original never reaches the proposer), and the labeled control (exclusion off) shows
the machinery reaches the excluded lemma and solves with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import Judging
from assay.prove import Lemma, Meta, Move, Settings, prove_text
from assay.sandbox import Sandbox
from tests.proofs.conftest import need

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks" / "obligations"


@pytest.mark.slow
def test_the_original_is_excluded_and_the_control_finds_it() -> None:
    need("agda")
    config = Config(judgment_cache="off")
    judging = Judging(Sandbox(backend="bwrap"), config=config)
    from assay.prove._folder import library_of

    text = (FOLDER / "NatRetrieveSuc.agda").read_text()
    meta = Meta(originals=("+-suc",), lemma="P.+-suc")
    library = library_of(config)
    offered: list[Lemma] = []

    def seeing(names: list[str], lemmas: list[Lemma]) -> list[Move]:
        """The fair run's proposer only looks: what retrieval offered is the point, and judging
        every candidate of an unsolvable run would cost minutes of Agda."""
        offered.extend(lemmas)
        return []

    fair = prove_text(
        "NatRetrieveSuc.agda",
        text,
        meta,
        Settings(judging, retrieval=True, library=library, proposer=seeing),
    )
    assert fair.exclusions == ["P.+-suc"]
    retrieved = [lemma.name for lemma in offered if lemma.source == "retrieved"]
    assert retrieved and "P.+-suc" not in retrieved
    assert fair.status == "unsolved"
    control = prove_text(
        "NatRetrieveSuc.agda",
        text,
        meta,
        Settings(judging, retrieval=True, exclusion=False, library=library),
    )
    assert control.exclusions == []
    assert control.status == "solved", control.reason
    # one step, with the excluded lemma (its underscore shape already closes this goal: the
    # goal fixes both arguments, unlike +-comm's)
    assert control.proof is not None and len(control.proof) == 1
    assert control.proof[0].term.split()[0] == "P.+-suc"
