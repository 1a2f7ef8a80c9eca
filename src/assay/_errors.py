"""The one exception tree of assay: every exception assay lets reach a caller is in it.

::

    AssayError                      anything assay raises on purpose               exit 1
    ├── InvalidInput                the caller's input is wrong (names the field)  exit 2
    │   ├── InvalidSpec             a check spec its kind refuses
    │   ├── StrictJSONError         text that is not strict JSON (assay._strict)
    │   ├── UnreadableFile          an input file missing, not regular, too big or not
    │   │                           UTF-8 (assay._files)
    │   ├── UnsafeCache             a cache someone else could write (assay._signed)
    │   ├── StagingTooLarge         a tree past the staging caps (sandbox)
    │   │   └── StagingRefused      a tree that changed while it was copied
    │   ├── InputTooLarge           a checker's inputs past the caps (sandbox)
    │   │   └── SubmissionUnstageable   the same for the submission's artifacts
    │   ├── HoleNotFound            no hole where the caller pointed (proofs)
    │   ├── LaneInputError          a file, position or term the lane cannot use
    │   │                           (proofs; also a LaneError)
    │   ├── UnsafePath              a proof file name that is not a plain path (proofs)
    │   ├── FolderInvalid           a problem folder with defects, one line each
    │   │                           (platform)
    │   └── AllowanceUsed           the submission allowance is used; says when the
    │                               next slot frees (platform)
    ├── SandboxUnavailable          isolation cannot be had (no bwrap), or a      exit 3
    │                               command cannot start
    ├── ToolchainMissing            a proof checker (agda, coqc, lake) is not     exit 3
    │                               installed here
    ├── FolderError                 a capped scratch folder cannot be made or     exit 1
    │                               holds too much (sandbox)
    ├── LaneError                   the Agda interaction lane failed (proofs)     exit 1
    │   └── TermRejected            Agda answered with an error: the term is not in
    │                               scope or does not typecheck at the hole (proofs)
    ├── PoolFailed                  the local pool's workers die before judging   exit 1
    │                               anything (executors)
    ├── RayUnavailable              Ray cannot start or be reached (executors)    exit 1
    └── LedgerError                 the store cannot be opened, written or read,  exit 1
        │                           or a blob no longer matches its hash (ledger)
        └── BlobMissing             no blob with that hash (never stored, or withdrawn)

A class lives beside the code that raises it (drawn with its package, or its ground module);
a caller catches the base it cares about (``InvalidInput``) or the one its package exports.
``exit_code`` is the one mapping to exit codes; the CLI applies it in one place
(``assay.cli._boundary``); ``tests/test_public_api.py`` keeps this drawing complete.

The rule that keeps errors and outcomes apart: a problem with the *work being checked* is an
`Outcome` (usually ``refuted``); a problem with the *caller's input or assay's machinery* is
raised, and at the boundary becomes exit code 2 / HTTP 4xx, or status ``error``. A kind that
catches one of these (``StagingTooLarge`` on a workspace, ``SubmissionUnstageable``) turns it
into an outcome, because there the input *is* the work.

Outside the tree, by design, are exceptions that never reach a caller: each is raised and
caught inside one package and becomes an outcome, a refusal or a tree error there.
``sandbox``: ``CgroupError``, ``SeccompUnsupported`` and ``TemplateDied`` (become
``SandboxUnavailable`` or an ``error`` outcome); ``Refused``, ``Malformed``, ``Oversized`` and ``Exit`` run inside the sandbox's judge and
candidate processes, never in the verifier. ``checks``: ``PatternTimeout``, ``NumberProblem``,
``UnitProblem``, ``WorkspaceEscape``, the SQL kind's ``QueryTimeout``, ``TooManyRows`` and
``TooLarge``, and the math kind's ``Unreadable``, ``ExtractProblem``, ``Undefined``, ``TooLarge``,
``WorkerTimeout`` and ``WorkerFailed`` (each becomes an outcome). ``platform``: ``_Raced`` (a
sweep that lost a race retries). ``prove``: ``SplitFailed`` (the judge failed on a case
split: the obligation's ``error``). ``service``: ``ApiError`` (a refused request: an HTTP
4xx answer), ``QueueFull`` (becomes 429) and ``Gone`` (the client disconnected). ``web``:
``PageError`` (a page's refusal: an HTML 4xx answer).
``proofs``: the lexers' ``AgdaLexError``, ``CoqLexError`` and ``LeanLexError`` (each
becomes a refusal).

Context travels as keyword arguments so a boundary can report it without parsing the message.
"""

from __future__ import annotations


class AssayError(Exception):
    """Root of every exception assay raises on purpose."""


class InvalidInput(AssayError):
    """The caller gave assay something it cannot use; the message names the field or line."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class InvalidSpec(InvalidInput):
    """A check spec that its kind refuses, so the check is never built, never run, never passed."""

    def __init__(self, message: str, *, kind: str | None = None, where: str | None = None) -> None:
        self.kind = kind
        super().__init__(message, where=where)


class SandboxUnavailable(AssayError):
    """Untrusted code cannot run here as asked: never silently downgraded to no isolation."""


class ToolchainMissing(AssayError):
    """A proof toolchain is not installed; kinds report inconclusive, commands exit 3."""


EXIT_CODES: dict[type[AssayError], int] = {
    InvalidInput: 2,
    SandboxUnavailable: 3,
    ToolchainMissing: 3,
    AssayError: 1,
}
"""Exit code per error class, most specific first; the CLI and the API read this one table."""


def exit_code(exc: AssayError) -> int:
    """The exit code for ``exc``: its most specific class in ``EXIT_CODES``."""
    for cls, code in EXIT_CODES.items():
        if isinstance(exc, cls):
            return code
    return 1
