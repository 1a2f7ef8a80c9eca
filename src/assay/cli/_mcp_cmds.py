"""``assay mcp``: assay's tools for an MCP client (an agent, an IDE), over stdio.

The command only reads its options and starts ``assay.mcp.serve_stdio``; the SDK and the server
are imported inside it, so ``assay --help`` never loads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay._config import Config
from assay._errors import InvalidInput
from assay.cli._boundary import boundary, say


def register(app: typer.Typer) -> None:
    """Add ``assay mcp`` to ``app``."""
    app.command("mcp")(mcp)


@boundary
def mcp(
    workspace_root: Annotated[
        Path | None,
        typer.Option(
            "--workspace-root",
            help="The only folder whose files tools may name (workspaces, Agda files); "
            "without it every file is refused.",
        ),
    ] = None,
) -> None:
    """Serve check, verify_answer_key, fill_hole and goal as MCP tools over stdio (see docs/mcp.md)."""
    if workspace_root is not None and not workspace_root.is_dir():
        raise InvalidInput("not a folder", where="--workspace-root")
    config = Config.from_env()
    try:
        import mcp as _sdk  # noqa: F401  (fail here, with a clear line, when it is missing)

        from assay.mcp import serve_stdio
    except ImportError as exc:
        say(
            f"assay mcp needs the mcp package, one of assay's dependencies (reinstall assay): {exc}"
        )
        raise typer.Exit(3) from None
    serve_stdio(workspace_root.resolve() if workspace_root else None, config)
