from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.proofs import JudgmentCache
from assay.sandbox import Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


@pytest.fixture
def cache(tmp_path: Path) -> JudgmentCache:
    return JudgmentCache(tmp_path / "cache")


def need(binary: str) -> None:
    if shutil.which(binary) is None:
        pytest.fail(f"{binary} is not installed: run ./scripts/setup (CI installs it)")
