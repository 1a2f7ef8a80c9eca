"""Shared by the adversarial tests of code-running kinds: a workspace from a dict, a real run."""

from __future__ import annotations

import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any

from assay import CheckContext, Outcome, build_check
from assay.sandbox import Sandbox


@lru_cache(maxsize=1)
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def workspace(root: Path, files: dict[str, str]) -> Path:
    """``files`` (relative path -> text, dedented) written under root/ws."""
    ws = root / "ws"
    for name, text in files.items():
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        if name.endswith(".sh"):
            path.chmod(0o755)
    ws.mkdir(exist_ok=True)
    return ws


def run(root: Path, files: dict[str, str], spec: dict[str, Any], **ctx: Any) -> Outcome:
    """Run one check for real (bubblewrap) on a workspace made of ``files``."""
    spec = {"timeout": 20, **spec}
    if "code" in spec:
        spec["code"] = textwrap.dedent(spec["code"])
    ws = workspace(root, files)
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=sandbox(), **ctx))
