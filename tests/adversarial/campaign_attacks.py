"""Shared by the campaign attack tests (tests/adversarial/test_campaign_*.py): a problem whose
runs finish by one sandbox-free check of the summary (42: verified, else refuted) and carry an
artifact a review can show, so an audit campaign over its runs can be attacked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.platform import Platform
from assay.review import parse_protocol
from assay.review._protocol import Protocol
from tests.platform.conftest import make_problem
from tests.review.helpers import answer, review_node

CUTOFF = "2031-01-01T00:00:00Z"
"""A year after the test clock starts (T0 = 2030-01-01)."""


def audited(
    platform: Platform,
    root: Path,
    problem: str = "audited",
    manager: str = "boss",
    policy: dict[str, Any] | None = None,
    roles: tuple[str, ...] = ("doc",),
    references: list[dict[str, Any]] | None = None,
    files: dict[str, str] | None = None,
) -> str:
    """A problem whose runs are verified when the summary is 42 (managed by ``manager``)."""
    contract = {
        "roles": [{"name": role, "required": True, "max_bytes": 10_000} for role in roles],
        "references": references or [],
        "acceptance": "The answer is 42.",
        "stages": [
            {
                "name": "answer",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": "42"}],
            }
        ],
    }
    folder = make_problem(
        root,
        problem=problem,
        contract=contract,
        policy={"allowance": {"count": 50, "window_hours": 24}, **(policy or {})},
        files=files,
    )
    platform.publish(folder, manager)
    return problem


def submit(
    platform: Platform,
    root: Path,
    problem: str,
    who: str,
    summary: str = "42",
    text: str | None = None,
    role: str = "doc",
) -> Any:
    """A run of ``who`` on ``problem`` with one artifact (their work)."""
    work = root / f"{who}-{summary}-{len(list(root.glob('*.work')))}.work"
    work.write_text(text if text is not None else f"{who}'s private work")
    return platform.submit(problem, {role: work}, summary, who)


def expert(seats: int = 1, **shows: Any) -> Protocol:
    """``seats`` experts, ``seats`` of them decide (the audit protocol)."""
    node = review_node(seats, "experts")
    if shows:
        node["shows"] = shows
    return protocol(
        {
            "title": f"{seats} expert(s) decide",
            "nodes": {
                "expert": node,
                "vote": {
                    "type": "reduce",
                    "op": "m_of_n",
                    "inputs": ["expert"],
                    "m": seats // 2 + 1,
                    "final": True,
                },
            },
        }
    )


def protocol(document: dict[str, Any]) -> Protocol:
    return parse_protocol(json.loads(json.dumps(document)), "protocol.yaml")


def experts(platform: Platform, *names: str) -> None:
    for name in names:
        platform.reviews.add_user(name, ["experts"], "admin")


def open_seats(platform: Platform, user: str, item: str = "") -> list[str]:
    return [s.seat for s in platform.reviews.seats(user).open if s.seat.startswith(item)]


def claim_answer(platform: Platform, seat: str, user: str, verdict: str, **extra: Any) -> Any:
    claimed = platform.reviews.claim(seat, user)
    return platform.reviews.respond(seat, user, answer(verdict, claimed.materials[0].uri, **extra))
