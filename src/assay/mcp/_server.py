"""The MCP server: the four tools over stdio, on the SDK's low-level ``Server``.

The low-level server, not ``MCPServer`` (the SDK's decorator layer): the ``check`` tool's
arguments are an assay item, validated by ``assay.episodes`` with its own field names, and every
tool refuses unknown keys. ``MCPServer`` would validate (and silently drop extra keys) with a
signature-derived model first, so two rule sets would disagree. Here each tool's JSON Schema is
written once (``TOOLS``) and the arguments are read by the tool itself.

A call never crashes the server: bad arguments are a tool error naming the field, a failure of
assay's own is a tool error saying so (and logged to stderr), and the work runs in a worker
thread (at most one per core) so the protocol keeps answering meanwhile. ``mcp`` is imported
only here, and this module is imported only by ``assay mcp``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from assay._config import Config
from assay._errors import AssayError, InvalidInput
from assay._version import __version__
from assay.mcp._tools import TOOLS, Toolbox

log = logging.getLogger("assay.mcp")

INSTRUCTIONS = (
    "assay decides whether a result is correct. `check` judges an answer against a task's "
    "checks; `verify_answer_key` scores a submission against an answer key; `fill_hole` judges "
    "a term in an Agda hole; `goal` asks for a hole's goal type. Only `verified` (or a solved "
    "hole) is a pass; `inconclusive` and `error` carry no reward."
)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def _result(document: dict[str, Any]) -> types.CallToolResult:
    """The document as text and as structured content; a non-finite number (no JSON has one)
    would reach a trainer as NaN, so such a document is assay's failure, not a verdict."""
    try:
        text = json.dumps(document, ensure_ascii=False, default=repr, allow_nan=False)
    except ValueError:
        return _error("internal error (no verdict): the result holds a non-finite number")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=document
    )


def build_server(toolbox: Toolbox) -> Server[Any]:
    """A server whose tools are ``TOOLS``, answered by ``toolbox`` (closed when it stops)."""
    by_name = {tool.name: tool for tool in TOOLS}
    limiter = anyio.CapacityLimiter(max(1, os.cpu_count() or 1))
    listed = [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
        for t in TOOLS
    ]

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            toolbox.close()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            return _error(f"unknown tool {params.name!r} (tools: {', '.join(by_name)})")
        arguments = params.arguments or {}
        try:
            document = await anyio.to_thread.run_sync(
                partial(tool.run, toolbox, arguments), limiter=limiter
            )
        except InvalidInput as exc:
            return _error(f"invalid arguments: {exc}")
        except AssayError as exc:
            return _error(f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # assay's own failure: reported, never a crash of the server
            log.exception("tool %s failed", params.name)
            return _error(f"internal error (no verdict): {type(exc).__name__}: {exc}")
        return _result(document)

    return Server(
        "assay",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(root: Path | None, config: Config) -> None:
    """Serve the tools on stdin/stdout until the client closes stdin."""
    anyio.run(_serve, build_server(Toolbox(root=root, config=config)))
