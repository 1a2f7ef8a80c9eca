"""Shared by the review attack tests (tests/adversarial/test_review_*.py): a problem whose
contract has artifact roles (or references) and one review stage, so an attack can reach what a
reviewer is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.platform import Platform
from tests.platform.conftest import make_problem


def publish_reviewed(
    platform: Platform,
    root: Path,
    protocol: dict[str, Any],
    roles: tuple[str, ...] = (),
    references: list[dict[str, Any]] | None = None,
    files: dict[str, str] | None = None,
) -> str:
    """A problem ``reviewed`` with the given artifact roles whose only stage is a review under
    ``protocol``."""
    contract = {
        "roles": [{"name": role, "required": True, "max_bytes": 10_000} for role in roles],
        "references": references or [],
        "acceptance": "Reviewers judge the work.",
        "stages": [{"name": "review", "type": "review", "protocol": "protocol.yaml"}],
    }
    folder = make_problem(
        root,
        problem="reviewed",
        contract=contract,
        files={"protocol.yaml": json.dumps(protocol), **(files or {})},
    )
    platform.publish(folder, "author")
    return "reviewed"
