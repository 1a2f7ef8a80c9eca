"""What the proof-search tests share: one Agda judge per module, judgments never cached (each
test sees its own verdicts, not an earlier test's)."""

from __future__ import annotations

import pytest

from assay._config import Config
from assay.proofs import Judging
from assay.sandbox import Sandbox
from tests.proofs.conftest import need


@pytest.fixture(scope="module")
def judging() -> Judging:
    need("agda")
    return Judging(Sandbox(backend="bwrap"), config=Config(judgment_cache="off"))
