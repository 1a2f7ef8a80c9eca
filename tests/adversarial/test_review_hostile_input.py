"""Input shaped to break the review commands rather than to pass them: YAML and JSON Schemas
nested deep enough to exhaust Python's recursion, and seat ids with digits ``int`` refuses.

Found (1): ``load_yaml`` (src/assay/review/_yaml.py) lets RecursionError out of PyYAML's
composer for ``[[[...]]]`` a few thousand deep (a 6 KB file): ``assay protocol validate`` says
"internal error: RecursionError" and exits 1 (store failure) instead of 2 naming the file.
Wanted: catch RecursionError in ``load_yaml`` -> InvalidInput("FILE: nested too deeply"), or
bound depth in ``_NoAliases.compose_node``.

Found (2): a response_schema nested ~150 deep (well inside the 256 KiB limit) makes
``protocol_problems`` raise RecursionError (jsonschema's ``check_schema``): publish and
``protocol validate`` fail with an internal error. Wanted: bound the schema's depth (e.g. 64)
in ``_review_problems`` before ``check_schema``, reported as a problem line.

Found (3): ``parse_seat`` (src/assay/review/_board.py) accepts any ``str.isdigit()`` index and
calls ``int()``: ``'²'`` is a digit to ``isdigit`` but not to ``int``, so
``review claim S/R/review/panel/²`` raises ValueError (internal error). Wanted:
``parts[4].isascii() and parts[4].isdigit()`` (or a regex ``[0-9]{1,3}``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay._errors import InvalidInput
from assay.cli._app import app
from assay.review import load_yaml, protocol_problems
from tests.platform.conftest import Clock
from tests.review.helpers import publish, seats_of, single, sqlite_platform, users


def _deep_yaml(depth: int) -> bytes:
    return ("[" * depth + "]" * depth).encode()


def _deep_schema(depth: int) -> bytes:
    inner = "{type: object}"
    for _ in range(depth):
        inner = "{not: " + inner + "}"
    return f"""nodes:
  p:
    type: review
    seats: 1
    eligible: {{group: g}}
    rubric: r
    response_schema:
      type: object
      required: [verdict]
      properties: {{verdict: {{enum: [pass, fail]}}, x: {inner}}}
  v: {{type: reduce, op: m_of_n, inputs: [p], m: 1, final: true}}
""".encode()


@pytest.mark.slow
@pytest.mark.parametrize("depth", [3_000, 50_000])
def test_deeply_nested_yaml_is_bad_input(depth: int) -> None:
    with pytest.raises(InvalidInput, match=r"protocol\.yaml"):
        load_yaml(_deep_yaml(depth), "protocol.yaml")


@pytest.mark.parametrize("depth", [150, 400])
def test_a_deeply_nested_response_schema_is_a_problem_line(depth: int) -> None:
    try:
        raw = load_yaml(_deep_schema(depth), "protocol.yaml")
    except InvalidInput:
        return  # refused while reading: fine
    problems = protocol_problems(raw, "protocol.yaml")
    assert any("response_schema" in line for line in problems), problems


@pytest.mark.slow
@pytest.mark.parametrize("text", [_deep_yaml(3_000), _deep_schema(150)], ids=["yaml", "schema"])
def test_protocol_validate_exits_2_on_deep_nesting(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "protocol.yaml"
    path.write_bytes(text)
    env = {"ASSAY_DB": f"sqlite:///{tmp_path / 'a.db'}", "ASSAY_USER": "admin"}
    done = CliRunner().invoke(app, ["protocol", "validate", str(path)], env=env)
    assert done.exit_code == 2, done.stderr
    assert "internal error" not in done.stderr


@pytest.mark.parametrize("index", ["\u00b2", "\u2460", "\u0661", "01", "0", "4", "%31"])
def test_a_malformed_seat_index_is_bad_input(tmp_path: Path, index: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(3, 2))
        users(platform)
        platform.submit("reviewed", {}, "42", "alice")
        real = seats_of(platform, "rev1")[0]
        forged = real.rsplit("/", 1)[0] + "/" + index
        with pytest.raises(InvalidInput):
            platform.reviews.claim(forged, "rev1")
        with pytest.raises(InvalidInput):
            platform.reviews.respond(forged, "rev1", b"{}")
