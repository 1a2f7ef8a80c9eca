"""The layers hold: no module reaches into another package's private modules, none imports upward.

Every module under ``src/assay`` is parsed (never imported) and every import in it is read, at
any depth: inside functions, under ``if TYPE_CHECKING:``, relative ones, and
``importlib.import_module("...")`` with a literal name. Two rules (see docs/architecture.md):

(a) ``assay.<pkg>._x`` (any private part below a package) is imported only from inside
    ``assay.<pkg>``; a package's own ``_kinds`` subpackage is inside it. The ground floor's
    modules (``assay._errors`` ...) are the root package's own and open to every layer.
(b) a module imports only its own layer or layers below it, in ``LAYERS`` order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

GROUND = (
    "assay._config",
    "assay._errors",
    "assay._files",
    "assay._signed",
    "assay._strict",
    "assay._version",
    "assay._wire",
)
LAYERS: tuple[tuple[str, ...], ...] = (
    GROUND,  # may import each other, nothing above
    ("assay.status",),
    ("assay.sandbox",),
    ("assay.proofs",),
    ("assay.checks",),
    ("assay.episodes",),  # the item wire format every interface shares: items, templates, results
    ("assay.executors",),  # judging many episodes: a local pool of warm workers, or Ray
    ("assay.ledger",),  # the append-only store: entries and blobs, no meaning
    ("assay.review",),  # review protocols, seats and reducers, recorded in the ledger
    ("assay.platform",),  # problems, contracts, submissions and runs, over the ledger
    ("assay.prove",),  # the proof search loop over the proof judges
    ("assay.integrations",),  # reward functions in the RL frameworks' own call shapes
    ("assay.service", "assay.mcp", "assay.web"),  # the HTTP API, web pages and MCP tools
    ("assay.cli",),
    ("assay", "assay.__main__"),  # the facade: re-exports, the entry point
)
"""Bottom to top. A package not in this table fails the test: place it before adding it."""


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of the longest entry that is ``module`` or a package holding it
    (the facade entries, ``assay`` and ``assay.__main__``, match only themselves)."""
    best: tuple[int, int] | None = None
    for index, entries in enumerate(LAYERS):
        for entry in entries:
            holds = module.startswith(entry + ".") and entry not in LAYERS[-1]
            if (module == entry or holds) and (best is None or len(entry) > best[0]):
                best = (len(entry), index)
    return None if best is None else best[1]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_owner(target: str) -> str | None:
    """The package that owns ``target``'s first private part (``assay.sandbox`` for
    ``assay.sandbox._conform.x``), or None when no part below a subpackage is private."""
    parts = target.split(".")
    for index in range(2, len(parts)):
        if _private(parts[index]):
            return ".".join(parts[:index])
    return None


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name a relative ``from`` import names."""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imported_names(module: str, source: str, *, is_package: bool = False) -> list[tuple[int, str]]:
    """Every ``assay`` module the module imports, with its line; for ``from M import _n`` also
    ``M._n``, so ``from assay.sandbox import _conform`` reads as the private module it is."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (
                _absolute(module, is_package, node.level, node.module)
                if node.level
                else node.module or ""
            )
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names if _private(a.name)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return [(line, name) for line, name in found if name == "assay" or name.startswith("assay.")]


def violations(module: str, source: str, *, is_package: bool = False) -> list[str]:
    """Why ``module`` (with this source text) breaks the layering; empty when it does not."""
    problems: list[str] = []
    own = layer_of(module)
    if own is None:
        return [f"{module}: not in LAYERS (place the package in tests/test_layers.py)"]
    for line, target in imported_names(module, source, is_package=is_package):
        owner = _private_owner(target)
        if owner is not None and not _inside(module, owner):
            problems.append(f"{module}:{line}: imports {target}, private to {owner}")
            continue
        theirs = layer_of(target)
        if theirs is not None and theirs > own:
            problems.append(f"{module}:{line}: imports {target}, a higher layer")
    return sorted(set(problems))


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted((SRC / "assay").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def test_src_keeps_its_layers() -> None:
    modules = _modules()
    assert len(modules) > 50, "the source tree was not found"
    problems = [
        problem
        for module, path in modules
        for problem in violations(
            module, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py"
        )
    ]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        (
            "assay.sandbox._protocol",
            "def read():\n    from assay.checks import Task\n",
            ["assay.sandbox._protocol:2: imports assay.checks, a higher layer"],
        ),
        (
            "assay._strict",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from assay.status import Outcome\n",
            ["assay._strict:3: imports assay.status, a higher layer"],
        ),
        (
            "assay.cli._app",
            "import assay.sandbox._conform as conform\n",
            ["assay.cli._app:1: imports assay.sandbox._conform, private to assay.sandbox"],
        ),
        (
            "assay.cli._app",
            "from assay.sandbox import _conform\n",
            ["assay.cli._app:1: imports assay.sandbox._conform, private to assay.sandbox"],
        ),
        (
            "assay.checks._kinds._proofs",
            "from assay.proofs._holes import fill\n",
            ["assay.checks._kinds._proofs:1: imports assay.proofs._holes, private to assay.proofs"],
        ),
        (
            "assay.proofs._judges",
            "import importlib\nimportlib.import_module('assay.checks._kinds')\n",
            ["assay.proofs._judges:2: imports assay.checks._kinds, private to assay.checks"],
        ),
        (
            "assay.status._report",
            "from ..sandbox import Sandbox\n",
            ["assay.status._report:1: imports assay.sandbox, a higher layer"],
        ),
        (
            "assay.sandbox._x",
            "from assay import __version__\n",
            ["assay.sandbox._x:1: imports assay, a higher layer"],
        ),
        (
            "assay.widgets._x",
            "",
            ["assay.widgets._x: not in LAYERS (place the package in tests/test_layers.py)"],
        ),
    ],
)
def test_the_checker_catches(module: str, source: str, expected: list[str]) -> None:
    assert violations(module, source) == expected


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("assay.checks._kinds._program", "from assay.checks._kinds._common import workspace_path"),
        ("assay.checks._kinds", "from . import _answers\nfrom ._common import shorten\n"),
        ("assay.checks._engine", "from assay.checks._kinds import _common\n"),
        ("assay.checks._task", "from assay._strict import loads_strict\nimport assay.sandbox\n"),
        ("assay._signed", "from assay._config import DEFAULT_CONFIG\n"),
        ("assay.cli._app", "from assay.sandbox import conform\nimport json\n"),
        ("assay", "from assay.checks import Task\n"),
    ],
)
def test_the_checker_allows(module: str, source: str) -> None:
    assert violations(module, source, is_package=module == "assay.checks._kinds") == []
