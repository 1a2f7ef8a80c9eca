"""Every adapter test starts from an environment without ``ASSAY_TEMPLATE`` or ``ASSAY_ROOT``:
a template the developer's shell happens to set must not change what a test judges."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_template_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_TEMPLATE", raising=False)
    monkeypatch.delenv("ASSAY_ROOT", raising=False)
