"""A protocol is validated in full before any seat opens: each invalid graph is refused with a
precise message naming the node and key, every problem at once."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import FolderInvalid, load_folder
from assay.review import load_yaml, parse_protocol, protocol_problems
from tests.platform.conftest import make_problem
from tests.review.helpers import escalation, review_node, single

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/problems/reviewed-essay"


def _broken(change: Any) -> dict[str, Any]:
    protocol = escalation()
    change(protocol["nodes"])
    return protocol


def _cycle(nodes: dict[str, Any]) -> None:
    nodes["panel"]["when"] = {"node": "decision", "outcome": "accept"}


def _dangling(nodes: dict[str, Any]) -> None:
    nodes["panel_vote"]["inputs"] = ["pannel"]


def _two_finals(nodes: dict[str, Any]) -> None:
    nodes["panel_vote"]["final"] = True


def _no_final(nodes: dict[str, Any]) -> None:
    nodes["decision"]["final"] = False


def _reducer_over_reducer(nodes: dict[str, Any]) -> None:
    nodes["expert_vote"]["inputs"] = ["panel_vote"]


def _first_resolved_over_review(nodes: dict[str, Any]) -> None:
    nodes["decision"]["inputs"] = ["panel", "expert_vote"]


def _conditional_on_review(nodes: dict[str, Any]) -> None:
    nodes["expert"]["when"] = {"node": "panel", "outcome": "unresolved"}


def _unreachable(nodes: dict[str, Any]) -> None:
    nodes["extra"] = review_node(1)


def _m_too_small(nodes: dict[str, Any]) -> None:
    nodes["panel_vote"]["m"] = 1


def _schema_without_verdict(nodes: dict[str, Any]) -> None:
    nodes["panel"]["response_schema"]["required"] = ["rationale"]


def _bad_schema(nodes: dict[str, Any]) -> None:
    nodes["panel"]["response_schema"]["properties"]["confidence"]["type"] = "decimal"


def _typo(nodes: dict[str, Any]) -> None:
    nodes["panel"]["seat"] = 3


def _reports_of_reducer(nodes: dict[str, Any]) -> None:
    nodes["expert"]["shows"] = {"reports_of": ["panel_vote"]}


def _score_without_field(nodes: dict[str, Any]) -> None:
    nodes["panel_vote"] = {
        "type": "reduce",
        "op": "score",
        "inputs": ["panel"],
        "field": "grade",
        "threshold": 0.5,
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_cycle, "cycle: panel -> decision -> panel_vote -> panel (a protocol has no loops)"),
        (_dangling, "nodes.panel_vote.inputs[0]: names 'pannel', which is not a node"),
        (_two_finals, "2 final nodes (panel_vote, decision): exactly one node decides the stage"),
        (_no_final, "no final node: mark the one reduce node"),
        (
            _reducer_over_reducer,
            "nodes.expert_vote.inputs[0]: 'panel_vote' is a reduce node, which emits an "
            "outcome; m_of_n counts the responses of a review node",
        ),
        (
            _first_resolved_over_review,
            "nodes.decision.inputs[0]: 'panel' is a review node, which emits responses; "
            "first_resolved takes reducers' outcomes",
        ),
        (
            _conditional_on_review,
            "nodes.expert.when.node: 'panel' is a review node; a node may be conditional only "
            "on a reducer's outcome",
        ),
        (
            _unreachable,
            "nodes.extra: does not lead to the final node 'decision': its result would never "
            "be used",
        ),
        (_m_too_small, "nodes.panel_vote.m: 1 of 3 seats: m must be at most the seats and more"),
        (_schema_without_verdict, "'panel''s response_schema must require 'verdict'"),
        (_bad_schema, "nodes.panel.response_schema: not a JSON Schema"),
        (_typo, "nodes.panel.seat: unknown key"),
        (_reports_of_reducer, "nodes.expert.shows.reports_of[0]: 'panel_vote' is a reduce node"),
        (_score_without_field, "nodes.panel_vote.field: 'panel''s response_schema must require"),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else "",
)
def test_an_invalid_graph_is_refused_with_a_precise_message(change: Any, message: str) -> None:
    problems = protocol_problems(_broken(change), "p.yaml")
    assert any(message in line for line in problems), problems
    assert all(line.startswith("p.yaml: ") for line in problems)
    with pytest.raises(InvalidInput, match=r"p\.yaml"):
        parse_protocol(_broken(change), "p.yaml")


def test_every_problem_is_named_at_once() -> None:
    def two(nodes: dict[str, Any]) -> None:
        _dangling(nodes)
        _two_finals(nodes)

    problems = protocol_problems(_broken(two))
    assert len(problems) >= 2, problems


def test_the_bundled_escalation_protocol_is_valid_and_ordered() -> None:
    raw = load_yaml((EXAMPLE / "review/escalation.yaml").read_bytes(), "escalation.yaml")
    protocol = parse_protocol(raw)
    assert protocol.final == "decision"
    order = protocol.order()
    assert order.index("panel") < order.index("panel_vote") < order.index("expert")
    assert order.index("expert_vote") < order.index("decision")
    assert parse_protocol(protocol.to_json()) == protocol  # the contract stores this form


def test_a_small_valid_protocol_has_no_problems() -> None:
    assert protocol_problems(single(seats=3, m=2)) == []
    assert protocol_problems(escalation()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nodes: &a {x: 1}\nother: *a\n", "aliases (*name) are not accepted"),
        ("nodes: {}\nnodes: {}\n", "the key 'nodes' appears twice"),
        ("nodes: !!python/object:os.system {}\n", "could not determine a constructor"),
    ],
)
def test_protocol_yaml_is_safe(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(message)):
        load_yaml(text.encode(), "p.yaml")


def test_a_problem_folder_names_its_protocol_problems(tmp_path: Path) -> None:
    broken = copy.deepcopy(escalation())
    broken["nodes"]["panel_vote"]["inputs"] = ["nobody"]
    contract = {
        "acceptance": "Reviewed.",
        "stages": [{"name": "people", "type": "review", "protocol": "review.yaml"}],
    }
    folder = make_problem(tmp_path, contract=contract, files={"review.yaml": json.dumps(broken)})
    with pytest.raises(FolderInvalid) as caught:
        load_folder(folder)
    assert "review.yaml: nodes.panel_vote.inputs[0]: names 'nobody'" in str(caught.value)
    contract["stages"][0]["protocol"] = "missing.yaml"
    folder = make_problem(tmp_path / "b", contract=contract)
    with pytest.raises(FolderInvalid, match=r"'missing\.yaml' does not exist"):
        load_folder(folder)


def test_an_inline_protocol_is_validated_too(tmp_path: Path) -> None:
    broken = escalation()
    broken["nodes"]["decision"]["final"] = False
    contract = {
        "acceptance": "Reviewed.",
        "stages": [{"name": "people", "type": "review", "protocol": broken}],
    }
    with pytest.raises(FolderInvalid) as caught:
        load_folder(make_problem(tmp_path, contract=contract))
    assert "problem.yaml: contract.stages[0].protocol: no final node" in str(caught.value)
