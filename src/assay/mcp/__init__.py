"""assay as MCP tools: ``check``, ``verify_answer_key``, ``fill_hole`` and ``goal``, each the twin
of a CLI command and returning the same JSON (see docs/mcp.md).

``Toolbox`` holds the tools as plain functions (no MCP involved); ``TOOLS`` lists them with
their argument schemas; ``serve_stdio`` runs them as an MCP server over stdio (the ``mcp``
package is imported only then).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from assay.mcp._tools import TOOLS, Toolbox, ToolSpec

if TYPE_CHECKING:
    from assay._config import Config


def serve_stdio(root: Path | None, config: Config) -> None:
    """Serve the tools over stdin/stdout until the client closes stdin; ``root``: where files
    named in arguments may be (None: none may be named)."""
    from assay.mcp._server import serve_stdio as serve

    serve(root, config)


__all__ = ["TOOLS", "ToolSpec", "Toolbox", "serve_stdio"]
