"""Drive ``assay mcp`` with the MCP SDK's own client, over stdio, as a real client does.

``serve(root)`` spawns ``.venv/bin/assay mcp`` through the SDK's ``stdio_client``, initializes a
``ClientSession`` and yields it; the server's stderr goes to a file the caller can read
(``stderr_of``), so a test can say no traceback was printed. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

ROOT = Path(__file__).resolve().parents[2]
ASSAY = ROOT / ".venv" / "bin" / "assay"
START = 60.0
"""Seconds to spawn and initialize the server (a busy 2-core machine imports slowly)."""


@asynccontextmanager
async def serve(
    stderr: Path, root: Path | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """A session with a fresh ``assay mcp`` (``--workspace-root root`` when given)."""
    args = ["mcp"] + (["--workspace-root", str(root)] if root is not None else [])
    params = StdioServerParameters(
        command=str(ASSAY), args=args, env={**passed_on(), **(env or {})}, cwd=str(ROOT)
    )
    with stderr.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=300) as session,
        ):
            with anyio.fail_after(START):
                await session.initialize()
            yield session


def passed_on() -> dict[str, str]:
    """The variables the session's settings live in (its private cache and key folders, any
    ``ASSAY_*``): the SDK starts a server with only a few safe variables, so without these the
    server would judge with the user's cache, and an old verdict could pass a test."""
    names = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME")
    return {k: v for k, v in os.environ.items() if k in names or k.startswith("ASSAY_")}


async def call(
    session: ClientSession, tool: str, arguments: dict[str, Any], timeout: float = 60.0
) -> CallToolResult:
    with anyio.fail_after(timeout):
        return await session.call_tool(tool, arguments)


def document(result: CallToolResult) -> dict[str, Any]:
    """The JSON document of a successful call; its text and structured content agree."""
    assert not result.is_error, text(result)
    parsed = json.loads(text(result))
    assert parsed == result.structured_content
    assert isinstance(parsed, dict)
    return parsed


def text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def refusal(result: CallToolResult) -> str:
    """The message of a tool error (one line, no traceback)."""
    assert result.is_error, text(result)
    message = text(result)
    assert "\n" not in message and "Traceback" not in message, message
    return message


def run(scenario: Any, *args: Any, limit: float = 240.0) -> Any:
    """Run an async scenario to its end, within ``limit`` seconds in all."""

    async def bounded() -> Any:
        with anyio.fail_after(limit):
            return await scenario(*args)

    return anyio.run(bounded)
