"""Shared by the review tests: protocols as dicts, a problem whose contract is one summary
check and one review stage, and responses that meet the standard schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from assay import Config
from assay.ledger import Ledger
from assay.platform import Platform
from tests.platform.conftest import Clock, make_problem

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["verdict", "rationale", "citations", "confidence"],
    "properties": {
        "verdict": {"enum": ["pass", "fail", "uncertain"]},
        "rationale": {"type": "string", "minLength": 1},
        "citations": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}


def review_node(seats: int = 3, group: str = "reviewers", **extra: Any) -> dict[str, Any]:
    node = {
        "type": "review",
        "seats": seats,
        "eligible": {"group": group},
        "rubric": "Judge the answer.",
        "response_schema": copy.deepcopy(RESPONSE_SCHEMA),
    }
    node.update(extra)
    return node


def escalation() -> dict[str, Any]:
    """Three reviewers, 2 of 3; else one expert who sees the panel's reports."""
    return {
        "nodes": {
            "panel": review_node(3),
            "panel_vote": {"type": "reduce", "op": "m_of_n", "inputs": ["panel"], "m": 2},
            "expert": review_node(
                1,
                "experts",
                when={"node": "panel_vote", "outcome": "unresolved"},
                shows={"reports_of": ["panel"]},
            ),
            "expert_vote": {"type": "reduce", "op": "m_of_n", "inputs": ["expert"], "m": 1},
            "decision": {
                "type": "reduce",
                "op": "first_resolved",
                "inputs": ["panel_vote", "expert_vote"],
                "final": True,
            },
        }
    }


def single(seats: int = 1, m: int = 1, **extra: Any) -> dict[str, Any]:
    """One review node and its m-of-n vote (final)."""
    return {
        "nodes": {
            "panel": review_node(seats, **extra),
            "vote": {"type": "reduce", "op": "m_of_n", "inputs": ["panel"], "m": m, "final": True},
        }
    }


def publish(
    platform: Platform,
    root: Path,
    protocol: dict[str, Any],
    files: dict[str, str] | None = None,
    references: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> str:
    """A problem ``reviewed`` whose contract checks the summary is 42, then reviews it."""
    contract = {
        "acceptance": "The answer is 42, and reviewers agree it is explained.",
        "stages": [
            {
                "name": "answer",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": "42"}],
            },
            {"name": "review", "type": "review", "protocol": "protocol.yaml"},
        ],
        "references": references or [],
    }
    folder = make_problem(
        root,
        problem="reviewed",
        contract=contract,
        files={"protocol.yaml": json.dumps(protocol), **(files or {})},
        **extra,
    )
    platform.publish(folder, "author")
    return "reviewed"


def users(platform: Platform, reviewers: int = 3, experts: int = 1) -> None:
    for i in range(1, reviewers + 1):
        platform.reviews.add_user(f"rev{i}", ["reviewers"], "admin")
    for i in range(1, experts + 1):
        platform.reviews.add_user(f"exp{i}", ["experts"], "admin")


def answer(verdict: str, cite: str, **extra: Any) -> bytes:
    document = {
        "verdict": verdict,
        "rationale": "Because.",
        "citations": [cite],
        "confidence": 0.9,
        "assistance": [],
    }
    document.update(extra)
    return json.dumps(document).encode()


def seats_of(platform: Platform, user: str, node: str | None = None) -> list[str]:
    return [s.seat for s in platform.reviews.seats(user).open if node is None or s.node == node]


def claim_and_answer(platform: Platform, seat: str, user: str, verdict: str) -> Any:
    claimed = platform.reviews.claim(seat, user)
    return platform.reviews.respond(seat, user, answer(verdict, claimed.materials[0].uri))


def sqlite_platform(tmp_path: Path, clock: Clock) -> Platform:
    """A platform over a fresh SQLite store (for tests where the store is not the point)."""
    config = Config(db=f"sqlite:///{tmp_path}/review.db", blobs=str(tmp_path / "blobs"))
    return Platform(Ledger.open(config), config, clock=clock)
