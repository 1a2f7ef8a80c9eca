"""What ``review material`` serves must be the bytes whose hash the seat listed.

Found: ``Reviews.material`` (src/assay/platform/_reviews.py, ``if uri.endswith("/summary")``)
decides by the URI's tail, so an artifact role or reference key named ``summary`` is served as
the submission's summary: the reviewer reads the participant's own description while the
record says they were shown the artifact (its sha256). Wanted: serve by the material's kind
(compare the whole URI with ``assay://submission/<id>/summary``), and the bytes always hash to
the listed sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.review_attacks import publish_reviewed
from tests.platform.conftest import Clock
from tests.review.helpers import seats_of, single, sqlite_platform, users


def _protocol() -> dict[str, Any]:
    protocol = single(1, 1)
    protocol["nodes"]["panel"]["shows"] = {"references": True}
    return protocol


@pytest.mark.parametrize(
    ("roles", "references"),
    [
        (("summary",), []),
        (("doc",), [{"key": "summary", "path": "reference/summary.txt"}]),
        (("doc", "summary"), []),
    ],
    ids=["artifact-role-summary", "reference-key-summary", "two-roles"],
)
def test_every_material_served_hashes_to_what_the_seat_listed(
    tmp_path: Path, roles: tuple[str, ...], references: list[dict[str, Any]]
) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        files = {"reference/summary.txt": "the reference's own bytes"}
        publish_reviewed(platform, tmp_path, _protocol(), roles, references, files)
        users(platform)
        artifacts = {}
        for role in roles:
            path = tmp_path / f"{role}.txt"
            path.write_text(f"the bytes of the artifact {role}")
            artifacts[role] = path
        platform.submit("reviewed", artifacts, "a flattering summary", "alice")
        (seat,) = seats_of(platform, "rev1")
        claimed = platform.reviews.claim(seat, "rev1")
        assert len(claimed.materials) >= 3
        for material in claimed.materials:
            served = platform.reviews.material(seat, material.uri, "rev1")
            assert hashlib.sha256(served).hexdigest() == material.sha256, (
                f"{material.uri}: served {served[:40]!r}, not the bytes the seat listed"
            )
