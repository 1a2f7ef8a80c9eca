"""Shared by the campaign and report tests: a problem whose runs are verified or refuted by one
summary check (the runs an audit samples), protocols written as files, and items folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.platform import Platform
from assay.review import parse_protocol
from assay.review._protocol import Protocol
from tests.platform.conftest import make_problem
from tests.review.helpers import answer, review_node


def checked(platform: Platform, root: Path) -> str:
    """Problem ``checked``: a run is verified when the summary is 42 (a sandbox-free check)."""
    contract = {
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
        problem="checked",
        contract=contract,
        policy={"allowance": {"count": 50, "window_hours": 24}},
    )
    platform.publish(folder, "boss")
    return "checked"


def expert() -> dict[str, Any]:
    """One expert decides alone (the reference protocol)."""
    return {
        "title": "A single expert decides",
        "nodes": {
            "expert": review_node(1, "experts"),
            "vote": {"type": "reduce", "op": "m_of_n", "inputs": ["expert"], "m": 1, "final": True},
        },
    }


def ranking(aggregate: str = "mean") -> dict[str, Any]:
    """Two reviewers score each item 0..1; the ``aggregate`` (mean, min or max) decides and
    orders the items."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["score", "rationale", "citations"],
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string", "minLength": 1},
            "citations": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        },
    }
    return {
        "title": "Rank by mean score",
        "nodes": {
            "judges": review_node(2, response_schema=schema),
            "mean": {
                "type": "reduce",
                "op": "score",
                "inputs": ["judges"],
                "field": "score",
                "aggregate": aggregate,
                "threshold": 0.5,
                "final": True,
            },
        },
    }


def parsed(protocol: dict[str, Any]) -> Protocol:
    return parse_protocol(json.loads(json.dumps(protocol)), "protocol.yaml")


def items(root: Path, count: int) -> Path:
    folder = root / "items"
    folder.mkdir(exist_ok=True)
    for i in range(1, count + 1):
        (folder / f"item{i:02}.md").write_text(f"candidate {i}\n")
    return folder


def respond(platform: Platform, seat: str, user: str, verdict: str, **extra: Any) -> Any:
    claimed = platform.reviews.claim(seat, user)
    return platform.reviews.respond(seat, user, answer(verdict, claimed.materials[0].uri, **extra))


def seats(platform: Platform, user: str, node: str | None = None, item: str = "") -> list[str]:
    return [
        s.seat
        for s in platform.reviews.seats(user).open
        if (node is None or s.node == node) and s.seat.startswith(item)
    ]
