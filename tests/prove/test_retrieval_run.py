"""Retrieval in a real run (agda-stdlib, slow): the exclusion is applied and named in the ledger,
and the labeled control (exclusion off) shows the machinery reaches the excluded lemma."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import Judging
from assay.prove import Meta, Settings, prove_text
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
    fair = prove_text(
        "NatRetrieveSuc.agda", text, meta, Settings(judging, retrieval=True, library=library)
    )
    assert fair.exclusions == ["P.+-suc"]
    assert all(t.term.split()[0] != "P.+-suc" for t in fair.tried if t.source == "retrieved")
    assert fair.status == "unsolved"
    control = prove_text(
        "NatRetrieveSuc.agda",
        text,
        meta,
        Settings(judging, retrieval=True, exclusion=False, library=library),
    )
    assert control.exclusions == []
    assert control.status == "solved", control.reason
    assert control.proof is not None and [s.term for s in control.proof] == ["P.+-suc m n"]
