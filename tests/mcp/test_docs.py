"""docs/mcp.md documents every tool the server lists, with the schema the server sends."""

from __future__ import annotations

import json
import re

import pytest

from assay.mcp import TOOLS, ToolSpec
from tests.mcp.client import ROOT

DOC = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_each_tool_is_documented_with_its_schema(tool: ToolSpec) -> None:
    name, schema = tool.name, tool.input_schema
    section = DOC.split(f"### `{name}`\n", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```json\n(.*?)```", section, re.DOTALL)
    documented = json.loads(blocks[0])
    assert set(documented["properties"]) == set(schema["properties"])
    assert documented.get("required", []) == schema.get("required", [])
    assert documented["additionalProperties"] is schema["additionalProperties"] is False
    assert len(blocks) >= 2  # and an example result
    json.loads(blocks[1])
