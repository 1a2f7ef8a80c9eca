"""A review protocol: a small graph of review nodes (seats people claim) and reduce nodes
(deterministic operations over their responses), validated in full before any seat opens.

The graph has no loops, expressions, user code, timers or calls out. Its only conditional is a
review node that opens on one outcome of a reducer (the expert who sees the panel's reports
only when the panel is unresolved). Every problem found is one line naming the node and key,
and all of them are reported at once.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationError

from assay._errors import InvalidInput
from assay._wire import WireModel

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
"""A node, group or user name (the platform's participant names have the same shape)."""
OUTCOMES = ("accept", "reject", "unresolved")
"""What a reducer emits."""
MAX_SCHEMA_DEPTH = 64
"""How deeply a response schema may nest (a deeper one exhausts the validator's recursion)."""


def fold(name: str) -> str:
    """A user name as the review rules compare it (NFKC, then casefold): ``Alice`` and
    ``alice`` are one person to the conflict, eligibility and one-seat rules."""
    return unicodedata.normalize("NFKC", name).casefold()


def _name(value: str) -> str:
    if not NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a name (letters, digits, _ . -; not starting with . or -; "
            "at most 64)"
        )
    return value


Name = Annotated[str, AfterValidator(_name)]
Outcome = Literal["accept", "reject", "unresolved"]


class _Authored(WireModel):
    """An unknown key is refused: a typo (``seat``, ``dealine_hours``) would silently change
    who judges the work."""

    model_config = ConfigDict(extra="forbid")


class Eligible(_Authored):
    """Who may claim a seat: a member of ``group``, or one of ``users``."""

    group: Name | None = None
    users: list[Name] | None = None


class Assistance(_Authored):
    """The declaration of assistance a response carries (``{"assistance": [{"agent", "role"}]}``)."""

    required: bool = True
    """The response must carry the declaration (an empty list says: unassisted)."""
    unassisted: bool = True
    """An empty declaration is accepted."""
    agents: list[str] | None = None
    """The agents a reviewer may declare (None: any, each named)."""


class Shows(_Authored):
    """What a reviewer of the node is shown (listed with hashes and ``assay://`` URIs)."""

    submission: bool = True
    """The submission's artifacts and summary."""
    statement: bool = True
    references: bool = False
    """The revision's reference inputs that are not sealed."""
    sealed_references: bool = False
    """Sealed references too (only when the protocol allows it)."""
    skills: bool = True
    reports_of: list[Name] = Field(default_factory=list)
    """Earlier review nodes whose responses this node's reviewers see (escalation)."""


class When(_Authored):
    """The node opens only when the reducer ``node`` emits ``outcome``."""

    node: Name
    outcome: Outcome


class ReviewNode(_Authored):
    """Seats claimed by eligible, non-conflicted users, each answering under the rubric."""

    type: Literal["review"]
    seats: int = Field(ge=1, le=50)
    eligible: Eligible
    conflicts: list[Name] = Field(default_factory=list)
    """Users who never sit on this node (the submitter never does, named or not)."""
    rubric: str = Field(min_length=1, max_length=20_000)
    response_schema: dict[str, Any]
    """JSON Schema (draft 2020-12) every response must meet."""
    assistance: Assistance = Field(default_factory=Assistance)
    shows: Shows = Field(default_factory=Shows)
    lease_hours: float = Field(2.0, gt=0, le=24 * 30)
    """How long a claim holds a seat; an uncompleted claim then lapses and the seat reopens."""
    deadline_hours: float = Field(72.0, gt=0, le=24 * 365)
    """From the node's opening: a node not completed by then makes the stage inconclusive."""
    when: When | None = None


class ReduceNode(_Authored):
    """One deterministic operation over earlier nodes; emits accept, reject or unresolved."""

    type: Literal["reduce"]
    op: Literal["m_of_n", "score", "first_resolved"]
    inputs: list[Name] = Field(min_length=1)
    m: int | None = Field(None, ge=1)
    """m_of_n: accept on at least m passes, reject on at least m fails."""
    field: str | None = None
    """score: the response's numeric field."""
    aggregate: Literal["mean", "min", "max"] = "mean"
    threshold: float | None = Field(None, allow_inf_nan=False)
    """score: accept when the aggregate is at least this (a finite number: NaN or infinity
    would make every review unpassable or every one pass)."""
    reject_below: float | None = Field(None, allow_inf_nan=False)
    """score: reject when the aggregate is below this (None: below ``threshold``); between the
    two, unresolved."""
    final: bool = False
    """This node's outcome is the stage's (exactly one node is final)."""


Node = Annotated[ReviewNode | ReduceNode, Field(discriminator="type")]


class Protocol(_Authored):
    """The whole graph; build one with ``parse_protocol`` (which validates the graph)."""

    schema_: Literal["assay.protocol/1"] = Field("assay.protocol/1", alias="schema")
    title: str | None = None
    nodes: dict[Name, Node] = Field(min_length=1)

    @property
    def final(self) -> str:
        """The one final reduce node (validation guarantees exactly one)."""
        return next(
            n for n, node in self.nodes.items() if isinstance(node, ReduceNode) and node.final
        )

    def review(self, name: str) -> ReviewNode:
        """The review node ``name`` (a reduce node there is a bug in the caller)."""
        node = self.nodes[name]
        assert isinstance(node, ReviewNode)
        return node

    def order(self) -> list[str]:
        """The nodes, each after everything it depends on (the graph is acyclic)."""
        done: list[str] = []
        seen: set[str] = set()

        def visit(name: str) -> None:
            if name in seen:
                return
            seen.add(name)
            for dep in depends(self.nodes[name]):
                visit(dep)
            done.append(name)

        for name in self.nodes:
            visit(name)
        return done


def depends(node: ReviewNode | ReduceNode) -> list[str]:
    """The nodes ``node`` needs settled first: a reducer's inputs, a review node's condition and
    the nodes whose reports it shows."""
    if isinstance(node, ReduceNode):
        return list(node.inputs)
    found = [node.when.node] if node.when else []
    return found + [n for n in node.shows.reports_of if n not in found]


def parse_protocol(raw: Any, file: str = "protocol") -> Protocol:
    """The protocol ``raw`` describes; InvalidInput listing every problem, one per line."""
    protocol, lines = _parse(raw, file)
    if lines or protocol is None:
        raise InvalidInput("\n".join(lines))
    return protocol


def protocol_problems(raw: Any, file: str = "protocol") -> list[str]:
    """Every problem with ``raw`` as a protocol, one line each (empty: it is valid)."""
    return _parse(raw, file)[1]


def _parse(raw: Any, file: str) -> tuple[Protocol | None, list[str]]:
    if not isinstance(raw, dict):
        return None, [f"{file}: must be a mapping with 'nodes'"]
    try:
        protocol = Protocol.model_validate(raw)
    except ValidationError as exc:
        return None, [_line(file, error) for error in exc.errors()]
    lines = [f"{file}: {line}" for line in graph_problems(protocol)]
    return protocol, lines


def _line(file: str, error: Any) -> str:
    where = ""
    for part in error["loc"]:
        if part in ("review", "reduce"):
            continue
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown key (a typo would silently change who judges the work)"
    if error["type"] == "union_tag_invalid" or error["type"] == "union_tag_not_found":
        message = "type must be 'review' or 'reduce'"
    return f"{file}: {where}: {message}" if where else f"{file}: {message}"


def graph_problems(protocol: Protocol) -> list[str]:
    """Every problem with the graph, one line each, naming the node and key."""
    nodes = protocol.nodes
    lines: list[str] = []
    for name, node in nodes.items():
        at = f"nodes.{name}"
        if isinstance(node, ReviewNode):
            lines += _review_problems(at, node, nodes)
        else:
            lines += _reduce_problems(at, node, nodes)
    lines += _cycles(nodes)
    finals = [n for n, node in nodes.items() if isinstance(node, ReduceNode) and node.final]
    if not finals:
        lines.append(
            "no final node: mark the one reduce node whose outcome decides the stage with "
            "'final: true'"
        )
    elif len(finals) > 1:
        lines.append(
            f"{len(finals)} final nodes ({', '.join(finals)}): exactly one node decides the stage"
        )
    elif not any("cycle" in line for line in lines):
        lines += _unreachable(finals[0], nodes)
    return lines


def _review_problems(at: str, node: ReviewNode, nodes: dict[str, Any]) -> list[str]:
    lines = []
    if node.eligible.group is None and not node.eligible.users:
        lines.append(f"{at}.eligible: name a 'group' or 'users' (who may claim a seat)")
    lines += _unfillable(at, node)
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    deep = nesting(node.response_schema) > MAX_SCHEMA_DEPTH
    try:
        if not deep:
            Draft202012Validator.check_schema(node.response_schema)
    except SchemaError as exc:
        lines.append(f"{at}.response_schema: not a JSON Schema: {exc.message}")
    except RecursionError:
        deep = True
    if deep:
        lines.append(f"{at}.response_schema: nested deeper than {MAX_SCHEMA_DEPTH} levels")
    if node.response_schema.get("type") != "object":
        lines.append(f"{at}.response_schema: must describe an object (type: object)")
    if node.when is not None:
        target = nodes.get(node.when.node)
        if target is None:
            lines.append(f"{at}.when.node: names {node.when.node!r}, which is not a node")
        elif not isinstance(target, ReduceNode):
            lines.append(
                f"{at}.when.node: {node.when.node!r} is a review node; a node may be "
                "conditional only on a reducer's outcome"
            )
    for i, other in enumerate(node.shows.reports_of):
        target = nodes.get(other)
        if target is None:
            lines.append(f"{at}.shows.reports_of[{i}]: names {other!r}, which is not a node")
        elif not isinstance(target, ReviewNode):
            lines.append(
                f"{at}.shows.reports_of[{i}]: {other!r} is a reduce node; reports come from "
                "review nodes"
            )
    if node.shows.sealed_references and not node.shows.references:
        lines.append(f"{at}.shows.sealed_references: needs 'references: true'")
    return lines


def nesting(value: Any) -> int:
    """How deeply ``value``'s lists and mappings nest (counted without recursion, so a hostile
    document cannot exhaust the stack while it is measured)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_SCHEMA_DEPTH:  # deeper than the limit is refused: no need to go on
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _unfillable(at: str, node: ReviewNode) -> list[str]:
    """What makes every seat of the node impossible to complete, where the protocol alone
    says so: no declaration of assistance is acceptable, or (named users only) fewer usable
    reviewers than seats (one seat per reviewer; conflicted users never sit)."""
    lines = []
    rule = node.assistance
    if rule.required and not rule.unassisted and rule.agents == []:
        lines.append(
            f"{at}.assistance: no declaration is acceptable (required, unassisted: false and "
            "no agents): no response could ever be recorded"
        )
    if node.eligible.group is None and node.eligible.users:
        named = {fold(u) for u in node.eligible.users}
        usable = named - {fold(u) for u in node.conflicts}
        if len(usable) < node.seats:
            lines.append(
                f"{at}.eligible.users: {len(usable)} named users not in conflicts for "
                f"{node.seats} seats (one seat per reviewer): the node could never settle"
            )
    return lines


def _reduce_problems(at: str, node: ReduceNode, nodes: dict[str, Any]) -> list[str]:
    lines = []
    missing = [i for i, n in enumerate(node.inputs) if n not in nodes]
    for i in missing:
        lines.append(f"{at}.inputs[{i}]: names {node.inputs[i]!r}, which is not a node")
    if len(set(node.inputs)) != len(node.inputs):
        lines.append(f"{at}.inputs: names a node twice")
    if node.op == "first_resolved":
        if len(node.inputs) < 2:
            lines.append(f"{at}.inputs: first_resolved takes the first of two or more reducers")
        for i, n in enumerate(node.inputs):
            if isinstance(nodes.get(n), ReviewNode):
                lines.append(
                    f"{at}.inputs[{i}]: {n!r} is a review node, which emits responses; "
                    "first_resolved takes reducers' outcomes"
                )
        for key in ("m", "field", "threshold", "reject_below"):
            if getattr(node, key) is not None:
                lines.append(f"{at}.{key}: first_resolved takes no {key!r}")
        return lines
    if len(node.inputs) != 1:
        lines.append(f"{at}.inputs: {node.op} reduces the responses of exactly one review node")
        return lines
    source = nodes.get(node.inputs[0])
    if isinstance(source, ReduceNode):
        lines.append(
            f"{at}.inputs[0]: {node.inputs[0]!r} is a reduce node, which emits an outcome; "
            f"{node.op} counts the responses of a review node"
        )
        return lines
    if source is None:
        return lines
    schema = source.response_schema
    if node.op == "m_of_n":
        if node.m is None:
            lines.append(f"{at}.m: m_of_n needs m (accept on m passes, reject on m fails)")
        elif node.m > source.seats or 2 * node.m <= source.seats:
            lines.append(
                f"{at}.m: {node.m} of {source.seats} seats: m must be at most the seats and "
                "more than half of them (so accept and reject cannot both hold)"
            )
        for key in ("field", "threshold", "reject_below"):
            if getattr(node, key) is not None:
                lines.append(f"{at}.{key}: m_of_n takes no {key!r}")
        verdict = schema.get("properties", {}).get("verdict", {})
        enum = verdict.get("enum") if isinstance(verdict, dict) else None
        if "verdict" not in schema.get("required", []) or not (
            isinstance(enum, list) and "pass" in enum and "fail" in enum
        ):
            lines.append(
                f"{at}.inputs[0]: {node.inputs[0]!r}'s response_schema must require 'verdict' "
                "with an enum holding 'pass' and 'fail' (what m_of_n counts)"
            )
        return lines
    if node.m is not None:
        lines.append(f"{at}.m: score takes no 'm'")
    if node.field is None or node.threshold is None:
        lines.append(f"{at}: score needs 'field' and 'threshold'")
        return lines
    if node.reject_below is not None and node.reject_below > node.threshold:
        lines.append(f"{at}.reject_below: must be at most 'threshold'")
    prop = schema.get("properties", {}).get(node.field, {})
    kind = prop.get("type") if isinstance(prop, dict) else None
    if node.field not in schema.get("required", []) or kind not in ("number", "integer"):
        lines.append(
            f"{at}.field: {node.inputs[0]!r}'s response_schema must require {node.field!r} "
            "as a number (what score aggregates)"
        )
    return lines


def _cycles(nodes: dict[str, Any]) -> list[str]:
    """One line per cycle found (following inputs, conditions and reports)."""
    lines: list[str] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for dep in depends(nodes[name]):
            if dep not in nodes:
                continue
            if state.get(dep) == 1:
                loop = [*path[path.index(dep) :], dep]
                lines.append(f"cycle: {' -> '.join(loop)} (a protocol has no loops)")
            elif dep not in state:
                visit(dep)
        path.pop()
        state[name] = 2

    for name in nodes:
        if name not in state:
            visit(name)
    return lines


def _unreachable(final: str, nodes: dict[str, Any]) -> list[str]:
    """Nodes whose result never reaches the final node (they would be asked for nothing)."""
    reached: set[str] = set()
    stack = [final]
    while stack:
        name = stack.pop()
        if name in reached or name not in nodes:
            continue
        reached.add(name)
        stack.extend(depends(nodes[name]))
    return [
        f"nodes.{name}: does not lead to the final node {final!r}: its result would never be used"
        for name in nodes
        if name not in reached
    ]
