"""Paths from candidate text: a module name never leads a write outside the scratch folder.

Issue 15, item 1: a solution headed ``module /some/abs/path/X where`` was staged at
``/some/abs/path/X.agda`` on the host, as root, before any sandbox ran; item 3: with
``/proc/assay/Proof`` the same proof of ``1 + 1 ≡ 3`` ended ``error`` instead of ``refuted``.
Every name here is tried with the real Agda in bubblewrap (Coq and Lean: the plan and the staging,
which is where the write would happen), and afterwards nothing outside the scratch folder may
have changed: a victim folder the names point into, the scratch folder's parent and the
installed agda-stdlib are compared file by file (names, sizes, modification times).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, Status, build_check
from assay.proofs import judge
from assay.proofs._batch import stage
from assay.proofs._coq import coq_plan
from assay.proofs._judges import toolchain_for
from assay.proofs._lean import lean_plan
from assay.proofs._paths import UnsafePath
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, Sandbox
from tests.proofs.conftest import need

AGDA_STDLIB = Path(Config().agda_stdlib)

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
WRONG = f"\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = refl\n"
RIGHT = f"\n{HEADER}\n\ntwo : 1 + 1 ≡ 2\ntwo = refl\n"


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    seen: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, dirs, names in os.walk(root):
            for name in dirs + names:
                path = os.path.join(folder, name)
                info = os.lstat(path)
                seen[path] = (info.st_size, info.st_mtime_ns)
    return seen


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """A victim folder with a file to overwrite, and scratch folders made next to it."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "X.agda").write_text("module X where\n")
    (victim / "X.v").write_text("Definition x := 1.\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "ws").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = _snapshot(victim, AGDA_STDLIB)
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    yield {"victim": victim, "scratch": scratch, "root": tmp_path}
    assert _snapshot(victim, AGDA_STDLIB) == before, "a file outside the scratch folder changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == outside_before
    assert list(scratch.iterdir()) == [], "a scratch folder was left behind"


def _agda_check(root: Path, module: str, body: str, statement: str, name: str) -> Any:
    ws = root / "ws"
    (ws / "Proof.agda").write_text(f"module {module} where\n{body}", encoding="utf-8")
    spec = {
        "kind": "agda",
        "file": "Proof.agda",
        "stdlib": False,
        "header": HEADER,
        "statement": statement,
        "name": name,
    }
    ctx = CheckContext(
        workspace=ws,
        base_dir=root,
        sandbox=Sandbox(backend="bwrap"),
        config=Config(judgment_cache="off"),
    )
    return build_check(spec).run(ctx)


# Each of these names would write outside the scratch folder, or cannot name a file at all.
EVIL_AGDA = {
    "absolute_into_victim": "{victim}/X",
    "absolute_proc": "/proc/assay/Proof",
    "relative_parent": "x/../../victim/X",
    "dotted_with_slash": "A./tmp/X",
    "backslash": "a\\b",
    "leading_dash": "-rf",
    "very_long": "X" * 300,
    "too_deep": ".".join(["A"] * 40),
    "keyword": "where.X",
}


@pytest.mark.parametrize("case", sorted(EVIL_AGDA))
def test_agda_module_names_that_escape_are_refused(case: str, world: dict[str, Path]) -> None:
    need("agda")
    module = EVIL_AGDA[case].format(victim=world["victim"])
    outcome = _agda_check(world["root"], module, WRONG, "1 + 1 ≡ 3", "wrong")
    assert outcome.status is Status.REFUTED, (case, outcome.detail)
    assert "module" in outcome.detail, outcome.detail


@pytest.mark.parametrize(
    "module",
    ["/proc/assay/Proof", "{victim}/X", "../victim/X"],
)
def test_the_issue_example_is_refuted_naming_the_module(
    module: str, world: dict[str, Path]
) -> None:
    """Issue 15 item 3: a wrong proof with this header is refuted (never `error`), saying why."""
    need("agda")
    module = module.format(victim=world["victim"])
    outcome = _agda_check(world["root"], module, WRONG, "1 + 1 ≡ 3", "wrong")
    assert outcome.status is Status.REFUTED
    assert "module" in outcome.detail and "refused before judging" in outcome.detail


@pytest.mark.parametrize(
    "body",
    [
        # A hole holding a double quote hid the header from the old scan (issue 15).
        '{! " !}\nmodule {victim}/X where\n' + WRONG,
        # A character literal holding a double quote hid it from the old lexer (issue 7).
        "c = '\"'\nmodule {victim}/X where\n" + WRONG,
        # A nested comment, then the header.
        "{- {- -} -}\nmodule {victim}/X where\n" + WRONG,
    ],
)
def test_hidden_headers_are_read_once(body: str, world: dict[str, Path]) -> None:
    need("agda")
    ws = world["root"] / "ws"
    (ws / "Proof.agda").write_text(body.replace("{victim}", str(world["victim"])))
    spec = {"kind": "agda", "file": "Proof.agda", "stdlib": False, "header": HEADER}
    spec |= {"statement": "1 + 1 ≡ 3", "name": "wrong"}
    ctx = CheckContext(
        workspace=ws, base_dir=world["root"], sandbox=Sandbox(backend="bwrap"),
        config=Config(judgment_cache="off"),
    )  # fmt: skip
    outcome = build_check(spec).run(ctx)
    assert outcome.status is Status.REFUTED, outcome.detail


@pytest.mark.parametrize("module", ["Deep.Nested.Proof", "Ünïcödé.Prüfung", "ℕ-lemmas"])
def test_good_names_still_verify_inside_the_scratch_folder(
    module: str, world: dict[str, Path]
) -> None:
    need("agda")
    outcome = _agda_check(world["root"], module, RIGHT, "1 + 1 ≡ 2", "two")
    assert outcome.status is Status.VERIFIED, outcome.detail
    staged = module.replace(".", "/") + ".agda"
    assert staged in outcome.evidence["files"]


EVIL_MODULES = ["/tmp/X", "../victim/X", "A/../../X", "-X", "A..B", "X\0Y", "X" * 300, "X.Y"]


@pytest.mark.parametrize("module", EVIL_MODULES)
def test_coq_module_names_are_refused_before_staging(module: str, world: dict[str, Path]) -> None:
    need("coqc")
    toolchain = toolchain_for("coq")
    plan = coq_plan(
        toolchain, "Definition two := 2.", statement="nat", name="two", header="", module=module
    )
    assert plan.refusals, module
    judged = judge("coq", plan, Sandbox(backend="bwrap"), Limits(timeout=60))
    assert judged.verdict is None


@pytest.mark.parametrize("module", EVIL_MODULES)
def test_lean_module_names_are_refused_before_staging(module: str, world: dict[str, Path]) -> None:
    """No lake here: the plan and the refusal are checked, which is where staging would write."""
    toolchain = Toolchain("lean", "/nonexistent/lake", "none", "none")
    plan = lean_plan(toolchain, "theorem two : 2 = 2 := rfl", statement="2 = 2", name="two",
                     header="", module=module)  # fmt: skip
    assert plan.refusals, module
    judged = judge("lean", plan, Sandbox(backend="bwrap"), Limits(timeout=60))
    assert judged.verdict is None


@pytest.mark.parametrize(
    "name",
    [
        "/tmp/escape.agda",
        "{victim}/X.agda",
        "../victim/X.agda",
        "a/../../victim/X.v",
        "a\0b.v",
        "link/X.agda",
        "X/" * 40 + "X.agda",
        "ok/" + "y" * 300 + ".lean",
    ],
)
def test_staging_writes_only_under_its_folder(name: str, world: dict[str, Path]) -> None:
    """The staging is the second line: it refuses what a plan let through, and never follows a
    link (``link`` points at the victim folder)."""
    folder = Path(tempfile.mkdtemp())
    try:
        (folder / "link").symlink_to(world["victim"])
        with pytest.raises(UnsafePath):
            stage(folder, {name.format(victim=world["victim"]): b"module X where\n"})
    finally:
        shutil.rmtree(folder)  # removes the link itself, never the victim


def test_a_hand_built_plan_with_a_bad_name_is_refused() -> None:
    """Whoever builds a plan, its file names are checked when it is made."""
    plan = Plan({"../X.agda": b"", "ok.agda": b""}, [["agda", "ok.agda"]], [], "ok.agda", "")
    assert plan.refusals and "'../X.agda'" in plan.refusals[0]


@pytest.mark.parametrize("module", ["Agda.Builtin.Equality", "Agda.Builtin.Nat"])
def test_a_solution_named_like_a_library_module_cannot_stand_in_for_it(
    module: str, world: dict[str, Path]
) -> None:
    """Staged at /proof/Agda/Builtin/…, it would be what the trusted header imports if Agda
    preferred it; Agda refuses the ambiguity, so the statement keeps its meaning."""
    need("agda")
    body = (
        "\nopen import Agda.Builtin.Nat using (Nat; _+_)\n"
        "data _≡_ {A : Set} (x y : A) : Set where\n  refl : x ≡ y\n"
        "wrong : 1 + 1 ≡ 3\nwrong = refl\n"
    )
    outcome = _agda_check(world["root"], module, body, "1 + 1 ≡ 3", "wrong")
    assert outcome.status is Status.REFUTED, outcome.detail
