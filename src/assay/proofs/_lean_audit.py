"""Lean's assumption audit: a trusted Lean program run in its own process, and its exact reading.

``#print axioms`` in the file the solution's code can reach is text that code can forge (an
``addDecl``-ed axiom named ``"x\\n'assay_goal' does not depend on any axioms"`` breaks a reading
of the last line) and it trusts every declaration the solution added, kernel-checked or not
(``set_option debug.skipKernelTC true``). The audit instead runs as ``lean --run AssayAudit.lean
MARKER HEADER-MODULE...`` in a fresh process that never imports the solution, so none of its
code runs there, right after the same step rebuilt the statement module from its checked
source:

1. it reads the three compiled modules' data (``readModuleData``: the solution, the statement
   module and the wrapper), refuses any of them that imports something other than what assay
   allows (the header's modules given on the command line, and ``Init``; the wrapper exactly
   the two others) or a name that is not plain (``«..»`` parts could reach outside the
   library), all *before* importing anything, and then imports exactly the header's modules
   and ``Init``;
2. it sends every declaration of the three modules to the kernel again, in dependency order
   (lean4checker's replay: inductives as whole blocks, then their constructors and recursors
   must equal the ones the kernel generates), with ``debug.skipKernelTC`` off;
3. it checks that ``assay_goal`` is a theorem whose type is exactly
   ``AssayStatement.statement`` at the theorem's own universe parameters, as many as the
   statement has (not ``statement.{0}``, a weaker instance);
4. it prints, one per line, each module and its imports, the number of declarations replayed,
   every axiom ``assay_goal`` depends on, and an ``end`` line with their count.

Each line starts with a marker drawn fresh for every run (it is substituted into the command at
run time, so it is not part of the cache key), and every name is a JSON array of its parts, so a
name holding a newline, a quote or a dot cannot forge or split a line. :func:`read_audit`
accounts for every line after the first marked one (what comes before is Lean elaborating the
trusted audit file itself, before any module is read) and withholds green on anything
unexpected.

The program was written by reading Lean 4's sources (``Lean.Replay``, ``Lean.AddDecl``,
``Lean.Environment``); it could not be run on this machine (no Lean toolchain can be installed
here). If a Lean release changes an API it uses, the audit fails to compile, the step exits 3,
and the judgment is an error, never green.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass

from assay.proofs._plan import AUDIT, STATEMENT, WRAPPER

AUDIT_MODULE = AUDIT
STATEMENT_MODULE = STATEMENT
STATEMENT_NAME = "statement"
SOLUTION_MODULE = "AssaySolution"
GOAL_MODULE = WRAPPER
GOAL_NAME = "assay_goal"
REJECTED_EXIT = 10
"""The audit's exit code when the kernel or one of its checks rejected a declaration."""

AUDIT_SOURCE = f"""\
import Lean
open Lean

/-! assay's Lean audit: `lean --run {AUDIT_MODULE}.lean MARKER`, in the folder holding the
compiled modules. It never imports them, so no code of the solution runs here. -/

namespace AssayAudit

/-- A name as a JSON array of its parts: no name can forge or split a line. -/
def nameJson : Name → Array Json
  | .anonymous => #[]
  | .str p s => (nameJson p).push (Json.str s)
  | .num p k => (nameJson p).push (toJson k)

def render (n : Name) : String :=
  (Json.arr (nameJson n)).compress

/-- The constants a declaration refers to: its type, its value, an inductive's constructors. -/
def refsOf (ci : ConstantInfo) : Array Name :=
  let fromType := ci.type.getUsedConstants
  match ci with
  | .defnInfo v => fromType ++ v.value.getUsedConstants
  | .thmInfo v => fromType ++ v.value.getUsedConstants
  | .opaqueInfo v => fromType ++ v.value.getUsedConstants
  | .inductInfo v => fromType ++ v.ctors.toArray
  | _ => fromType

abbrev ReplayM := StateRefT NameSet CoreM

/-- Send `name` (one of ours) to the kernel after everything of ours it refers to. -/
partial def replay (ours : NameMap ConstantInfo) (name : Name) : ReplayM Unit := do
  if (← get).contains name then return
  let some ci := ours.find? name | return
  modify (·.insert name)
  match ci with
  | .inductInfo v =>
    for member in v.all do
      modify (·.insert member)
    let mut types : List InductiveType := []
    for member in v.all do
      let some (.inductInfo w) := ours.find? member
        | throwError "the inductive block of {{name}} is incomplete"
      for dep in w.type.getUsedConstants do
        replay ours dep
      let mut ctors : List Constructor := []
      for c in w.ctors do
        let some (.ctorInfo cv) := ours.find? c
          | throwError "the constructor {{c}} of {{member}} is missing"
        modify (·.insert c)
        for dep in cv.type.getUsedConstants do
          replay ours dep
        ctors := ctors ++ [({{ name := cv.name, type := cv.type }} : Constructor)]
      types := types ++ [({{ name := w.name, type := w.type, ctors := ctors }} : InductiveType)]
    addDecl (Declaration.inductDecl v.levelParams v.numParams types false)
  | .ctorInfo v => replay ours v.induct
  | .recInfo v =>
    for member in v.all do
      replay ours member
  | _ =>
    for dep in refsOf ci do
      replay ours dep
    match ci with
    | .defnInfo v => addDecl (Declaration.defnDecl v)
    | .thmInfo v => addDecl (Declaration.thmDecl v)
    | .opaqueInfo v => addDecl (Declaration.opaqueDecl v)
    | .axiomInfo v => addDecl (Declaration.axiomDecl v)
    | _ => throwError "{{name}} is not a declaration a solution can make"

def replayAll (ours : NameMap ConstantInfo) (order : Array (Name × ConstantInfo)) :
    ReplayM Unit := do
  for (n, _) in order do
    replay ours n

/-- Every axiom `start` depends on, in the replayed environment. -/
def axiomsOf (env : Environment) (start : Name) : CoreM (Array Name) := do
  let mut seen : NameSet := {{}}
  let mut todo : List Name := [start]
  let mut found : Array Name := #[]
  repeat
    let n :: rest := todo | break
    todo := rest
    unless seen.contains n do
      seen := seen.insert n
      let some ci := env.find? n | throwError "{{n}} is not in the environment"
      if let .axiomInfo _ := ci then
        found := found.push n
      todo := (refsOf ci).toList ++ todo
  return found

def check (ours : NameMap ConstantInfo) (order : Array (Name × ConstantInfo)) :
    CoreM (Array Name) := do
  let _ ← StateRefT'.run (replayAll ours order) {{}}
  let env ← getEnv
  for (n, ci) in order do
    match ci, env.find? n with
    | .ctorInfo a, some (.ctorInfo b) =>
      unless a == b do throwError "the constructor {{n}} is not the one the kernel generates"
    | .recInfo a, some (.recInfo b) =>
      unless a == b do throwError "the recursor {{n}} is not the one the kernel generates"
    | .ctorInfo _, _ => throwError "the constructor {{n}} was not generated by the kernel"
    | .recInfo _, _ => throwError "the recursor {{n}} was not generated by the kernel"
    | _, _ => pure ()
  unless ours.contains `{GOAL_NAME} && ours.contains `{STATEMENT_MODULE}.{STATEMENT_NAME} do
    throwError "the wrapper or the statement module is missing its declaration"
  let some (.thmInfo goal) := env.find? `{GOAL_NAME}
    | throwError "{GOAL_NAME} is not a theorem"
  let some stmt := env.find? `{STATEMENT_MODULE}.{STATEMENT_NAME}
    | throwError "{STATEMENT_MODULE}.{STATEMENT_NAME} is not in the environment"
  -- exactly the statement at the goal's own universe parameters, as many as the statement
  -- has: `statement.{{0}}` (a weaker, level-instantiated statement) is refused
  let stated := Expr.const `{STATEMENT_MODULE}.{STATEMENT_NAME} (goal.levelParams.map Level.param)
  unless goal.levelParams.length == stmt.levelParams.length && goal.type == stated do
    throwError "{GOAL_NAME} does not state {STATEMENT_MODULE}.{STATEMENT_NAME} at all its levels"
  axiomsOf env `{GOAL_NAME}

/-- A name part `import` accepts unescaped: never empty, `.`, `..` or a path separator. -/
def plainPart (s : String) : Bool :=
  !s.isEmpty && !s.front.isDigit && s.all fun c =>
    c.isAlphanum || c == '_' || c == '\\'' || c == '!' || c == '?' ||
      (c.toNat > 127 && c != '«' && c != '»')

/-- A module name of plain string parts only (no number part, not anonymous). -/
def plainName : Name → Bool
  | .str .anonymous s => plainPart s
  | .str p s => plainName p && plainPart s
  | _ => false

/-- A dotted module name from the command line, part by part (no escaping rules apply). -/
def moduleName (s : String) : Name :=
  (s.splitOn ".").foldl Name.mkStr Name.anonymous

/-- What each of our modules may import: the wrapper exactly the two others (and Init); the
statement and the solution only the header's modules and Init, decided by assay. -/
def allowedFor (header : Array Name) (module : Name) : Array Name :=
  if module == `{GOAL_MODULE} then #[`Init, `{STATEMENT_MODULE}, `{SOLUTION_MODULE}]
  else header.push `Init

def ourModules : List (String × Name) :=
  [("{SOLUTION_MODULE}.olean", `{SOLUTION_MODULE}), ("{STATEMENT_MODULE}.olean", `{STATEMENT_MODULE}),
   ("{GOAL_MODULE}.olean", `{GOAL_MODULE})]

end AssayAudit

open AssayAudit in
def main (args : List String) : IO UInt32 := do
  let marker :: headerArgs := args | return 3
  let header := headerArgs.toArray.map moduleName
  unless header.all plainName do return 3
  let say (kind payload : String) : IO Unit := IO.println s!"{{marker}} {{kind}} {{payload}}"
  say "begin" "{{}}"
  try
    initSearchPath (← findSysroot)
    let mut ours : NameMap ConstantInfo := {{}}
    let mut order : Array (Name × ConstantInfo) := #[]
    for (file, modName) in ourModules do
      let (data, _) ← readModuleData (System.FilePath.mk file)
      let mut listed : Array Json := #[]
      for imp in data.imports do
        listed := listed.push (Json.arr (nameJson imp.module))
      say "module" (Json.arr #[Json.arr (nameJson modName), Json.arr listed]).compress
      -- checked before anything is imported: a forged .olean could list `«..».«..».Evil`,
      -- which the search path would resolve outside the library
      for imp in data.imports do
        unless plainName imp.module && (allowedFor header modName).contains imp.module do
          throw <| IO.userError s!"{{modName}} imports a module outside the allowed ones"
      for (n, ci) in data.constNames.zip data.constants do
        if ours.contains n then
          throw <| IO.userError s!"{{n}} is declared twice"
        -- like lean4checker: unsafe and partial code is never replayed, so nothing the kernel
        -- accepts can refer to it
        unless ci.isUnsafe || ci.isPartial do
          ours := ours.insert n ci
          order := order.push (n, ci)
    -- only the modules assay decided (the header's and Init), never names read from a
    -- compiled file; releases that have `loadExts` default it to false (no extension of an
    -- imported module is initialized), and in older ones only the library's own run
    let env ← importModules ((header.push `Init).map fun m => ({{ module := m }} : Import)) {{}}
    let opts : Options := KVMap.setNat (KVMap.setBool {{}} `Elab.async false) `maxHeartbeats 0
    let ctx : Core.Context := {{ fileName := "<assay audit>", fileMap := default, options := opts }}
    let (axioms, _) ← Lean.Core.CoreM.toIO (check ours order) ctx {{ env := env }}
    say "replayed" (toString order.size)
    for a in axioms do
      say "axiom" (render a)
    say "end" (toString axioms.size)
    return 0
  catch e =>
    say "rejected" (Json.str (toString e)).compress
    return {REJECTED_EXIT}
"""


def new_marker() -> str:
    """A fresh marker for one run: nothing the solution wrote before can contain it."""
    return f"assay-lean-audit-{secrets.token_hex(16)}"


@dataclass(frozen=True)
class AuditExpectation:
    """What one run's audit must report besides its axioms."""

    marker: str
    header_imports: tuple[str, ...]
    """The trusted header's imports: the statement module imports exactly these (and Init);
    the solution imports nothing else."""


@dataclass(frozen=True)
class AuditReading:
    """What one run's audit reported: the axioms and the facts that withhold green."""

    axioms: list[str]
    """Each axiom ``assay_goal`` depends on, dotted; a name whose parts are not plain is shown
    as its JSON parts, so it never equals an allowed name."""
    problems: list[str]
    """Facts that withhold green (an import outside the header)."""


_PLAIN_PART = re.compile(r"[^\s.«»`\"\\\[\],]+")


def _name(value: object) -> tuple[str | int, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    if not all(
        (isinstance(p, str) and p) or (isinstance(p, int) and not isinstance(p, bool) and p >= 0)
        for p in value
    ):
        return None
    return tuple(value)


def shown(name: tuple[str | int, ...]) -> str:
    """Dotted when every part is a plain string, else the JSON parts (never a plain name)."""
    if all(isinstance(p, str) and _PLAIN_PART.fullmatch(p) for p in name):
        return ".".join(str(p) for p in name)
    return json.dumps(list(name), ensure_ascii=True)


def _dotted(module: str) -> tuple[str, ...]:
    return tuple(module.split("."))


def read_audit(output: str, expected: AuditExpectation) -> AuditReading | None:
    """The audit's facts, or None when its output is not exactly what the program prints.

    Lines before the first marked line are Lean elaborating the trusted audit file (warnings of
    a newer release, say); from that line on every line must be marked and well formed: one
    ``begin``, exactly the three modules once each, one ``replayed``, the axioms (each once),
    and a final ``end`` with their count. Names are compared as parts, never as text.
    """
    lines = output.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    prefix = expected.marker + " "
    first = next((i for i, line in enumerate(lines) if line.startswith(prefix)), None)
    if first is None:
        return None
    body = lines[first:]
    records: list[tuple[str, object]] = []
    for line in body:
        if not line.startswith(prefix):
            return None
        kind, _, payload = line[len(prefix) :].partition(" ")
        try:
            records.append((kind, json.loads(payload)))
        except ValueError:
            return None
    if records[0] != ("begin", {}) or records[-1][0] != "end":
        return None
    modules: dict[tuple[str | int, ...], set[tuple[str | int, ...]]] = {}
    axioms: list[tuple[str | int, ...]] = []
    replayed: list[object] = []
    for kind, value in records[1:-1]:
        if kind == "module":
            if not isinstance(value, list) or len(value) != 2 or not isinstance(value[1], list):
                return None
            module = _name(value[0])
            imports = [_name(item) for item in value[1]]
            if module is None or module in modules or any(i is None for i in imports):
                return None
            modules[module] = {i for i in imports if i is not None}
        elif kind == "replayed":
            replayed.append(value)
        elif kind == "axiom":
            name = _name(value)
            if name is None or name in axioms:
                return None
            axioms.append(name)
        else:
            return None
    count = records[-1][1]
    if not isinstance(count, int) or isinstance(count, bool) or count != len(axioms):
        return None
    if len(replayed) != 1 or not isinstance(replayed[0], int) or replayed[0] < 1:
        return None
    problems = _module_problems(modules, expected)
    if problems is None:
        return None
    return AuditReading([shown(name) for name in axioms], problems)


def _module_problems(
    modules: dict[tuple[str | int, ...], set[tuple[str | int, ...]]],
    expected: AuditExpectation,
) -> list[str] | None:
    """The three modules must be there; the statement and wrapper import exactly what assay
    wrote; the solution imports nothing beyond the header (and never Lean or Lake)."""
    solution, statement, goal = (
        _dotted(SOLUTION_MODULE),
        _dotted(STATEMENT_MODULE),
        _dotted(GOAL_MODULE),
    )
    if set(modules) != {solution, statement, goal}:
        return None
    header = {_dotted(m) for m in expected.header_imports} | {("Init",)}
    if modules[statement] != header or modules[goal] != {("Init",), statement, solution}:
        return None
    return [
        f"the solution imports {shown(module)}, which the header does not"
        for module in sorted(modules[solution] - header, key=shown)
    ] + [
        f"the solution imports {shown(module)} (never allowed)"
        for module in sorted(modules[solution], key=shown)
        if module[:1] in (("Lean",), ("Lake",))
    ]
