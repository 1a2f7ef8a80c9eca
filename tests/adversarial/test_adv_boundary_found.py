"""Found by the adversarial review of the sandbox boundary (helper "adv-boundary"): per-run
cgroups, the seccomp filter, limits named from the parent's observations, capped folders and
staging (issue 7 "Masking" and "Robustness", issue 15 items 2 and 5, issue 17 item 4).

Every test states the status the attack must get and is marked ``xfail(strict=True)`` until the
class is closed: when a fix lands, the xfail turns into an unexpected pass and must be removed.
Each attack is a wrong solution (the answer is 41, the check wants 42); the checks are what an
honest task author writes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from assay import CheckContext, Config, build_check
from assay.sandbox import Limits, Sandbox
from assay.sandbox._cgroup import hierarchy
from assay.sandbox._folders import remove_tree
from assay.status import Outcome
from tests.adversarial.code_checks import run, sandbox, workspace
from tests.helpers import E, I, R, V

CHECK = "from solution import answer\nassert answer() == 42"
WRONG = "def answer():\n    return 41\n"


def found(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"found by adversarial review: {reason}")


needs_cgroup = pytest.mark.skipif(
    hierarchy() is None, reason="needs a writable cgroup (root): limits are read from it"
)


# 1. Staging a workspace can raise OSError: wrong work becomes `error`, under any policy ---------
#
# ``snapshot`` joins full path strings. A workspace whose own path is shorter than the staging
# target's (``<tmp>/assay-run-XXXXXXXX/workspace``, 34 characters with /tmp; any relative path,
# as the CLI passes it) holds a chain of 250-character folders with files of every name length:
# at some depth the source path is under PATH_MAX and the copy's path is not, ``os.mkdir`` /
# ``os.open`` raise ENAMETOOLONG, nothing catches it, and the engine reports
# "check 'python' failed inside assay: OSError" as `error`. Fix: stage with directory
# descriptors (``os.open(name, O_DIRECTORY|O_NOFOLLOW, dir_fd=parent)``, ``mkdir(dir_fd=)``,
# ``open(dir_fd=)``), so path length never matters; and treat any OSError of the copy as a
# finding about the workspace (refuted, like the staging caps under limits_are_rules; see 2),
# never as assay's fault. Same for ``_protocol.stage_input``/``_listing`` (program artifacts).


def _long_paths(ws: Path, levels: int = 16) -> None:
    folder_fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            name = "d" * 250
            os.mkdir(name, dir_fd=folder_fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder_fd)
            os.close(folder_fd)
            folder_fd = inner
            for length in range(1, 256):
                os.close(os.open("f" * length, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=folder_fd))
    finally:
        os.close(folder_fd)


@pytest.mark.slow
@pytest.mark.parametrize("rules", [True, False], ids=["limits_are_rules", "default"])
def test_a_workspace_with_paths_too_long_to_stage(
    rules: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path, {"solution.py": WRONG})
    _long_paths(ws)
    monkeypatch.chdir(tmp_path)  # `assay check --workspace ws`: a relative workspace path
    check = build_check({"kind": "python", "code": CHECK, "limits_are_rules": rules})
    try:
        outcome = check.run(CheckContext(workspace=Path("ws"), sandbox=sandbox()))
    finally:
        remove_tree(ws)  # pytest's own cleanup cannot reach past PATH_MAX
    assert outcome.status is R, outcome.detail[:200]


@pytest.mark.slow
def test_program_artifacts_with_paths_too_long_to_stage(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(CHECKER)
    # A short absolute workspace path (shorter than <tmp>/assay-checker-PID-XXXXXXXX/input/...).
    ws = Path(tempfile.mkdtemp(prefix="w", dir="/tmp"))
    try:
        (ws / "tree").mkdir()
        _long_paths(ws / "tree")
        spec = {
            "kind": "program",
            "checker": "check.py",
            "artifacts": {"program": "tree"},
            "result_channel": "fd",
            "timeout": 20,
            "memory_mb": 256,
        }
        context = CheckContext(workspace=ws, base_dir=task, sandbox=sandbox())
        outcome = build_check(spec).run(context)
    finally:
        remove_tree(ws)
    assert outcome.status is R, outcome.detail[:200]


# 2. Staging caps are limits the policy controls, and they ignore limits_are_rules -------------
#
# A policy that knows its answer is wrong adds 129 nested folders (or one file past
# max_staged_mb, or 100,001 empty files) to its workspace: the python/shell/hidden_python
# check is "inconclusive: the workspace is too large to stage" even with
# ``limits_are_rules: true``, the one setting documented to stop limit masking. The ``program``
# kind already refutes an oversized submission ("its size is a property of the work").
# Fix: ``staged_workspace`` takes ``limits_are_rules`` and refutes when it is set (better:
# always refute, as ``program`` does: the workspace is the work).
# Closed: ``staged_workspace`` now refutes (these tests pass).


@pytest.mark.parametrize("shape", ["deep", "large"])
def test_a_workspace_over_the_staging_caps_under_rules(shape: str, tmp_path: Path) -> None:
    files = {"solution.py": WRONG}
    config = Config()
    if shape == "deep":
        files["/".join(["d"] * 130) + "/x"] = ""
    else:
        files["blob.bin"] = "x" * (2 * 1024 * 1024)
        config = Config(max_staged_mb=1)
    outcome = run(
        tmp_path, files, {"kind": "python", "code": CHECK, "limits_are_rules": True}, config=config
    )
    assert outcome.status is R, outcome.detail


# 3. A checker that runs the submission: the submission writes /output/result.json ------------
#
# ``program``'s /output is writable by every process of the sandbox, all one uid. A checker
# that runs the submitted program (the usual way to judge a program) gives it /output: a
# detached child of the submission keeps replacing /output/result.json with "verified" until
# the sandbox is torn down, after the checker wrote "refuted" and exited 0 (measured: verified
# 5 times out of 5 with ``result_channel: "file"``). Closed by ``result_channel: "fd"``: the
# verdict travels on descriptor 3, a unix socket only the checker's first process holds
# (``subprocess`` closes it in the submission; a socket cannot be reopened through
# /proc/PID/fd; ptrace and pidfd_getfd are refused), and /output/result.json is ignored. The
# forger below tries all three ways in; the wrong program is refuted, the right one verified.

CHECKER = """\
import json, os, subprocess, sys
out = subprocess.run(["python3", "/input/artifacts/program/solve.py"],
                     capture_output=True, text=True, timeout=10)
ok = out.stdout.strip() == "42"
verdict = {"result": "verified" if ok else "refuted", "summary": "printed " + out.stdout.strip()[:20]}
os.write(int(os.environ["ASSAY_RESULT_FD"]), json.dumps(verdict).encode())
sys.exit(0)
"""

FORGE = """\
import json, os, time
data = json.dumps({"result": "verified", "summary": "forged"})
checker = os.getppid()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        for way in ("/dev/fd/3", f"/proc/{checker}/fd/3"):
            try:
                with open(way, "w") as f:
                    f.write(data)
            except OSError:
                pass
        try:
            os.write(3, data.encode())
        except OSError:
            pass
        end = time.monotonic() + 8
        while time.monotonic() < end:
            try:
                with open("/output/.r", "w") as f:
                    f.write(data)
                os.replace("/output/.r", "/output/result.json")
            except OSError:
                pass
    os._exit(0)
"""
FORGER = FORGE + "print(41)\n"


def _program_outcome(tmp_path: Path, checker: str, solve: str, **extra: object) -> Outcome:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(checker)
    ws = workspace(tmp_path, {"solve.py": solve})
    spec = {
        "kind": "program",
        "checker": "check.py",
        "artifacts": {"program": "solve.py"},
        "timeout": 20,
        "memory_mb": 256,
        **extra,
    }
    return build_check(spec).run(CheckContext(workspace=ws, base_dir=task, sandbox=sandbox()))


@pytest.mark.slow
def test_a_submission_run_by_its_checker_forges_the_result(tmp_path: Path) -> None:
    outcome = _program_outcome(tmp_path, CHECKER, FORGER, result_channel="fd")
    assert outcome.status is R, outcome.detail
    assert outcome.detail == "printed 41"


@pytest.mark.slow
def test_the_file_channel_is_still_forgeable(tmp_path: Path) -> None:
    """The reason "fd" exists: the same forger against a checker using /output/result.json."""
    file_checker = CHECKER.replace(
        'os.write(int(os.environ["ASSAY_RESULT_FD"]), json.dumps(verdict).encode())',
        'open("/output/result.json", "w").write(json.dumps(verdict))',
    )
    outcome = _program_outcome(tmp_path, file_checker, FORGER)
    assert outcome.status in (V, R), outcome.detail  # verified when the forger wins the race


# A SAT-like checker (examples/checkers/sat, but the submission is a solver it runs) over
# result_channel "fd": a solver that prints a falsifying assignment and forges the result is
# refuted, a solver that prints a satisfying one is verified, whether it forges or not.
SAT_CHECKER = """\
import json, os, subprocess, sys
CLAUSES = [[1, -2], [2, 3], [-1, -3]]
def conclude(result, summary):
    os.write(int(os.environ["ASSAY_RESULT_FD"]), json.dumps(
        {"result": result, "summary": summary}).encode())
    sys.exit(0)
out = subprocess.run(["python3", "/input/artifacts/program/solve.py"],
                     capture_output=True, text=True, timeout=10)
try:
    values = {abs(int(t)): int(t) > 0 for t in out.stdout.split() if int(t) != 0}
except ValueError:
    conclude("refuted", "not an assignment")
if sorted(values) != [1, 2, 3]:
    conclude("refuted", "not every variable is assigned")
for clause in CLAUSES:
    if not any(values[abs(x)] == (x > 0) for x in clause):
        conclude("refuted", f"clause {clause} is false")
conclude("verified", "all clauses are satisfied")
"""
SAT_SOLVERS = {
    "falsifying_forger": (FORGE + "print('1 2 3 0')\n", R),
    "satisfying_forger": (FORGE + "print('1 2 -3 0')\n", V),
    "satisfying": ("print('1 2 -3 0')\n", V),
    "falsifying": ("print('-1 -2 -3 0')\n", R),
}


@pytest.mark.slow
@pytest.mark.parametrize("solver", sorted(SAT_SOLVERS))
def test_a_sat_checker_running_its_submission_over_the_fd_channel(
    solver: str, tmp_path: Path
) -> None:
    code, expected = SAT_SOLVERS[solver]
    outcome = _program_outcome(tmp_path, SAT_CHECKER, code, result_channel="fd")
    assert outcome.status is expected, outcome.detail


KILLER = """\
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
print(41)
"""


# A submission run by its checker can still kill it (same uid, same sandbox). Documented: the
# check is then `error` (the checker failed), never a verdict; a trainer masks it. This test
# pins that it stays error, not verified.
@pytest.mark.slow
def test_a_submission_run_by_its_checker_kills_it(tmp_path: Path) -> None:
    outcome = _program_outcome(tmp_path, CHECKER, KILLER, result_channel="fd")
    assert outcome.status is E, outcome.detail
    assert "137" in outcome.detail  # bwrap reports its child's SIGKILL as exit 128 + 9


# 4. A sacrificial process hits a real limit; the wrong answer is then masked ------------------
#
# A limit is named whenever the run failed and the cgroup's counters moved, whatever failed:
# the candidate exhausts the task budget with threads it does not need (or forks a child that
# is OOM-killed), then returns 41; the judge's assertion fails on the returned value, and the
# outcome was "inconclusive: the checked code hit the process limit" (or the memory limit).
# Closed: the judge reports over its nonce channel that the check itself failed on a value it
# received (``check_failed``: an assertion, an exception or a failed test once the candidate's
# process was started; a call into a process that died never returns to the check), and the
# parent then refutes whatever the counters say; a limit is named only when the judge's own
# call into the candidate failed (the candidate's process died during it).
# Closed too, "huge_return" and its class: what crosses back is capped by the run's memory
# (``_limits.reply_cap``: a sixteenth of memory_mb, at most 64 MiB; ``_proxy``): a longer reply
# is refused from its length header, unread; a reply whose objects would take more than four
# caps in the judge is refused while it is decoded, before they are made; and values kept from
# many calls are refused once the judge's own memory would pass half the run's. Each is "the
# value(s) returned is too large to judge", refuted. The candidate's side never copies a value
# past the cap. As first written, "huge_return" returned 150 MiB under memory_mb 128: the
# candidate's process is OOM-killed while it builds that string, inside its own call, before
# anything crosses (measured: a call that builds it and returns 41 dies the same way), so that
# instance is a limit of the candidate's own call: inconclusive by default (as stalling is),
# refuted under limits_are_rules (``test_a_value_the_candidate_cannot_build``).

SACRIFICES = {
    "threads": """
import threading
def answer():
    stop = threading.Event()
    try:
        for _ in range(200):
            threading.Thread(target=stop.wait, daemon=True).start()
    except RuntimeError:
        pass
    stop.set()
    return 41
""",
    "huge_return": """
def answer():
    return "x" * (100 << 20)
""",
    "huge_int": """
def answer():
    return 1 << (8 * (24 << 20))
""",
    "deep_list": """
import sys
def answer():
    sys.setrecursionlimit(1_000_000)
    value = 41
    for _ in range(200_000):
        value = [value]
    return value
""",
    "many_keys": """
def answer():
    return {i: i for i in range(600_000)}
""",
    "empty_sets": """
def answer():
    return [frozenset()] * 1_500_000
""",
    "huge_exception": """
def answer():
    raise ValueError(1 << (8 * (24 << 20)), "x" * (40 << 20))
""",
    "oom_child": """
import os
def answer():
    pid = os.fork()
    if pid == 0:
        blocks = []
        while True:
            blocks.append(bytearray(16 << 20))
    os.waitpid(pid, 0)
    return 41
""",
    "oom_thread_after_answer": """
import threading
def _hog():
    blocks = []
    while True:
        blocks.append(bytearray(8 << 20))
def answer():
    threading.Thread(target=_hog, daemon=True).start()
    return 41
""",
}


HIDDEN = ("empty_sets", "huge_return", "threads")  # the same judge: a few instances suffice


@needs_cgroup
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "kind"),
    [(n, "python") for n in sorted(SACRIFICES)] + [(n, "hidden_python") for n in HIDDEN],
)
def test_a_sacrificial_limit_masks_a_wrong_answer(name: str, kind: str, tmp_path: Path) -> None:
    spec = {"kind": kind, "code": CHECK, "memory_mb": 128}
    outcome = run(tmp_path, {"solution.py": SACRIFICES[name]}, spec)
    assert outcome.status is R, outcome.detail


@needs_cgroup
@pytest.mark.parametrize("zygote", ["true", "false"])
def test_a_value_too_large_to_cross_is_refuted_on_both_paths(
    zygote: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The templates' path and bubblewrap per check (``ASSAY_SANDBOX_ZYGOTE=false``)."""
    monkeypatch.setenv("ASSAY_SANDBOX_ZYGOTE", zygote)
    ws = workspace(tmp_path, {"solution.py": SACRIFICES["huge_return"]})
    spec = {"kind": "python", "code": CHECK, "memory_mb": 128, "timeout": 20}
    outcome = build_check(spec).run(CheckContext(workspace=ws, config=Config.from_env()))
    assert outcome.status is R, outcome.detail
    assert "too large to judge" in outcome.detail, outcome.detail
    assert f"> {(128 << 20) // 16} bytes" in outcome.detail, outcome.detail


KEPT = "from solution import answer\nkept = [answer(i) for i in range(40)]\nassert kept[0] == 42"
MEDIUM = "def answer(i):\n    return 'x' * (7 << 20) + str(i)\n"


@needs_cgroup
def test_many_medium_replies_kept_by_the_check(tmp_path: Path) -> None:
    """40 replies of 7 MiB, each under the cap, all kept: 280 MiB under memory_mb 128."""
    spec = {"kind": "python", "code": KEPT, "memory_mb": 128}
    outcome = run(tmp_path, {"solution.py": MEDIUM}, spec)
    assert outcome.status is R, outcome.detail
    assert "too large to judge" in outcome.detail, outcome.detail


@needs_cgroup
@pytest.mark.parametrize("rules", [False, True], ids=["default", "limits_are_rules"])
def test_a_value_the_candidate_cannot_build(rules: bool, tmp_path: Path) -> None:
    """150 MiB of text under memory_mb 128: the candidate's own call hits the memory limit
    before anything crosses; a limit of its own call (inconclusive, or refuted as a rule)."""
    spec = {"kind": "python", "code": CHECK, "memory_mb": 128, "limits_are_rules": rules}
    outcome = run(tmp_path, {"solution.py": "def answer():\n    return 'x' * (150 << 20)\n"}, spec)
    assert outcome.status is (R if rules else I), outcome.detail
    assert "memory limit" in outcome.detail, outcome.detail


# Shell instance: bash reached the check's last line and reported status 1 there (the report
# datagram arrived), so the check itself concluded. Closed: when the shell judge got that
# report and the status is not 0, it reports ``failed`` too; the status then decides (refuted
# unless it is the ``expect_exit`` asked for) and the cgroup's counters are not read.
SLEEPERS = """\
#!/bin/bash
for i in $(seq 80); do setsid sleep 30 </dev/null >/dev/null 2>&1 & done 2>/dev/null
echo 41
"""
MEMORY_HOG = """\
#!/bin/bash
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))' 2>/dev/null
echo 41
"""
CPU_BURNER = """\
#!/bin/bash
setsid python3 -c 'while True: pass' </dev/null >/dev/null 2>&1 &
echo 41
"""
LEFT_BEHIND = {"sleepers": SLEEPERS, "memory_hog": MEMORY_HOG, "cpu_burner": CPU_BURNER}


@needs_cgroup
@pytest.mark.parametrize("name", sorted(LEFT_BEHIND))
def test_a_sacrificial_limit_in_a_shell_check(name: str, tmp_path: Path) -> None:
    spec = {"kind": "shell", "code": 'out=$(./solve.sh); [ "$out" = 42 ]', "memory_mb": 200}
    outcome = run(tmp_path, {"solve.sh": LEFT_BEHIND[name]}, spec)
    assert outcome.status is R, outcome.detail


@needs_cgroup
def test_a_shell_check_expecting_a_failure_still_names_a_limit(tmp_path: Path) -> None:
    """expect_exit 1 met while the counters moved: the limit may be why, so it is named."""
    spec = {
        "kind": "shell",
        "code": 'out=$(./solve.sh); [ "$out" = 42 ]',
        "memory_mb": 200,
        "expect_exit": 1,
    }
    outcome = run(tmp_path, {"solve.sh": SLEEPERS}, spec)
    assert outcome.status is I, outcome.detail
    assert "process limit" in outcome.detail, outcome.detail


# 5. "cpu" was named from the whole cgroup's CPU time, but RLIMIT_CPU bound per process -------
#
# Two processes each used 0.7 s of CPU under a 1 s limit (neither near it) and the run failed:
# the parent reported the CPU limit (cgroup total 1.4 s >= 0.95 s). Closed: ``cpu_seconds`` is
# now the whole run's CPU time, enforced by the parent (it reads the cgroup's counter every
# 0.1 s and kills the run once it is over), and "cpu" is named only when the parent did that.
# The first test keeps a failing run just under the whole-run limit (above the old 95 % rule).


@needs_cgroup
def test_cpu_time_summed_over_processes_is_not_the_cpu_limit() -> None:
    burn = "import time\nwhile time.process_time() < 1.9: pass"
    py = os.path.realpath(sys.executable)
    command = f"{py} -c '{burn}' & {py} -c '{burn}' & wait; exit 1"
    limits = Limits(timeout=30, cpu_seconds=4, memory_mb=256)
    result = Sandbox(backend="bwrap").run(["/bin/sh", "-c", command], limits=limits)
    assert result.exit_code == 1, result.output
    assert result.limit is None, (result.limit, result.cpu_seconds)


@needs_cgroup
def test_cpu_time_of_the_whole_run_is_the_cpu_limit() -> None:
    """Two processes at 1 s each under a 1 s whole-run limit: the parent kills the run."""
    burn = "import time\nwhile time.process_time() < 1: pass"
    py = os.path.realpath(sys.executable)
    command = f"{py} -c '{burn}' & {py} -c '{burn}' & wait; exit 0"
    limits = Limits(timeout=30, cpu_seconds=1, memory_mb=256)
    result = Sandbox(backend="bwrap").run(["/bin/sh", "-c", command], limits=limits)
    assert result.limit == "cpu", (result.limit, result.cpu_seconds, result.output)
    assert result.cpu_seconds is not None and 1.0 <= result.cpu_seconds < 1.8, result.cpu_seconds


# 6. The stale-scratch sweep deletes through a symlink swapped in by another local user ---------
#
# Every checker run sweeps ``<tmp>/assay-checker-<pid>-*`` folders whose pid is dead, as root,
# in the shared temporary directory, with ``remove_tree``, which works on path strings: it
# lists a folder, then ``chmod``s, lists and empties each subfolder by path. Any local user can
# create ``/tmp/assay-checker-999999-x/a/`` and replace ``a`` with a symlink to, say, /etc
# between the listing and the descent (a loop of renames wins such races): the sweep then
# ``chmod 0700``s the link's target and unlinks every file in it, as root. The test plays the
# winning swap deterministically, right after the listing. Fix: sweep only folders this uid
# owns (``lstat().st_uid == geteuid()`` and mode 0700, as ``mkdtemp`` makes them), and make
# ``remove_tree`` descend through descriptors (``os.open(name, O_DIRECTORY | O_NOFOLLOW,
# dir_fd=parent)``, ``os.scandir(fd)``, ``unlink``/``rmdir``/``rename`` with ``dir_fd``), as
# ``shutil.rmtree``'s safe variant does, so a swapped-in link is never followed.


def test_the_scratch_sweep_never_follows_a_swapped_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.sandbox import _folders

    shared, victim = tmp_path / "tmp", tmp_path / "victim"
    shared.mkdir()
    victim.mkdir()
    victim.chmod(0o755)
    (victim / "precious.txt").write_text("keep me")
    planted = shared / "assay-checker-999999999-x"
    (planted / "a").mkdir(parents=True)
    planted.chmod(0o700)  # as mkdtemp makes it, so the sweep takes it
    real_scandir = os.scandir

    class Listing:
        """os.scandir for the planted folder: list it, then let the attacker win the race."""

        def __init__(self, path: object) -> None:
            with real_scandir(path) as found:  # type: ignore[call-overload]
                self.entries = list(found)
            if _names(path) == str(planted) and (planted / "a").is_dir():
                (planted / "a").rmdir()
                (planted / "a").symlink_to(victim)

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(os, "scandir", Listing)  # _folders calls os.scandir
    removed = _folders.sweep_stale(shared, "assay-checker-", lambda pid: False)
    monkeypatch.undo()
    assert (victim / "precious.txt").exists(), "the sweep deleted a file through a symlink"
    assert victim.stat().st_mode & 0o777 == 0o755
    assert removed == 1 and not planted.exists(), "the swap was never played"


def _names(path: object) -> str:
    """The folder an os.scandir argument names (a path, or a descriptor of an open folder)."""
    if isinstance(path, int):
        return os.readlink(f"/proc/self/fd/{path}")
    return str(path)


@pytest.mark.parametrize("shape", ["mode_0755", "a_link"])
def test_the_scratch_sweep_takes_only_its_own_private_folders(shape: str, tmp_path: Path) -> None:
    """A folder of the right name that mkdtemp did not make (not 0700, or a link) is left."""
    from assay.sandbox import _folders

    shared, victim = tmp_path / "tmp", tmp_path / "victim"
    shared.mkdir()
    victim.mkdir(mode=0o700)
    (victim / "precious.txt").write_text("keep me")
    planted = shared / "assay-checker-999999999-x"
    if shape == "a_link":
        planted.symlink_to(victim)
    else:
        planted.mkdir(mode=0o755)
        (planted / "precious.txt").write_text("keep me")
    assert _folders.sweep_stale(shared, "assay-checker-", lambda pid: False) == 0
    assert (planted / "precious.txt").exists()


# 7. Socket families that --unshare-net does not isolate are open to the sandbox ---------------
#
# ``socket(AF_VSOCK, ...)`` succeeds inside the sandbox (this machine is a VM: /dev/vsock
# exists on the host). vsock is not confined by a network namespace on kernels without vsock
# namespace support, so a sandboxed process could reach the hypervisor host (CID 2) or a local
# vsock service (CID 1) although the README promises "no network at all". Whether a connection
# gets through was deliberately NOT tried (the review may only use loopback addresses). Fix:
# the seccomp filter refuses ``socket``/``socketpair`` for every family but AF_UNIX, AF_INET,
# AF_INET6 (isolated by the namespace) and AF_NETLINK (EAFNOSUPPORT or EPERM).


def _host_has_vsock() -> bool:
    import socket

    try:
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
    except (OSError, AttributeError):
        return False
    return True


VSOCK = """
import socket
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
    print("created")
except OSError as exc:
    print("refused", exc.errno)
"""


@pytest.mark.skipif(not _host_has_vsock(), reason="this kernel has no AF_VSOCK sockets at all")
def test_a_vsock_socket_cannot_be_created() -> None:
    py = os.path.realpath(sys.executable)
    result = Sandbox(backend="bwrap").run(
        [py, "-I", "-S", "-c", VSOCK], limits=Limits(timeout=20, memory_mb=256)
    )
    assert result.output.startswith("refused"), result.output


FAMILIES = """
import socket
for name, family, kind in (("unix", socket.AF_UNIX, socket.SOCK_STREAM),
                           ("inet", socket.AF_INET, socket.SOCK_STREAM),
                           ("inet6", socket.AF_INET6, socket.SOCK_DGRAM),
                           ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
                           ("packet", socket.AF_PACKET, socket.SOCK_RAW),
                           ("vsock", getattr(socket, "AF_VSOCK", 40), socket.SOCK_STREAM)):
    try:
        socket.socket(family, kind).close()
        print(name, "created")
    except OSError as exc:
        print(name, "refused", exc.errno)
a, b = socket.socketpair()
print("socketpair created")
try:
    socket.socketpair(socket.AF_INET)
except OSError as exc:
    print("socketpair_inet refused", exc.errno)
"""


def test_only_unix_and_ip_sockets_can_be_created() -> None:
    """The seccomp filter answers EAFNOSUPPORT (97) for every other family, on any kernel."""
    import errno

    py = os.path.realpath(sys.executable)
    result = Sandbox(backend="bwrap").run(
        [py, "-I", "-S", "-c", FAMILIES], limits=Limits(timeout=20, memory_mb=256)
    )
    lines = set(result.output.splitlines())
    for allowed in ("unix", "inet", "inet6", "socketpair"):
        assert f"{allowed} created" in lines, result.output
    for refused in ("netlink", "packet", "vsock"):
        assert f"{refused} refused {errno.EAFNOSUPPORT}" in lines, result.output


# 8. Sparse evidence files: the verifier hashes far more than /output can hold -----------------
#
# /output is a 64 MiB tmpfs, but a sparse file takes no room in it: a checker (or a submission
# it runs) ``truncate``s 1,000 evidence files to 64 MiB each (the per-file cap), and the
# verifier, outside any sandbox limit and after the checker's timeout, hashes 64 GiB of zeros
# (measured: 40 such files, 2.5 GiB, 2.2 s end to end; 1,000 is about a minute of verifier CPU
# per check). Fix: cap the bytes hashed over all evidence at the folder's size (OUTPUT_MB), or
# refuse files whose ``st_blocks * 512`` is far below ``st_size``; over the cap is a problem
# (error) like the other evidence caps.

SPARSE_CHECKER = """\
import json, os
os.makedirs("/output/evidence", exist_ok=True)
for i in range(3):
    with open(f"/output/evidence/e{i}", "wb") as f:
        f.truncate(64 * 1024 * 1024)
open("/output/result.json", "w").write(json.dumps({"result": "refuted", "summary": "x"}))
"""


def test_sparse_evidence_is_not_hashed_past_the_output_cap(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(SPARSE_CHECKER)
    ws = workspace(tmp_path, {"a": "1"})
    spec = {"kind": "program", "checker": "check.py", "artifacts": {"a": "a"}, "timeout": 20}
    outcome = build_check(spec).run(CheckContext(workspace=ws, base_dir=task, sandbox=sandbox()))
    hashed = sum(f["size"] for f in (outcome.evidence or {}).get("evidence_files", []))
    assert hashed <= 64 * 1024 * 1024, (outcome.status, hashed)
    assert outcome.status is E and "together" in outcome.detail, outcome.detail


# 9. A FIFO as /output/result.json hangs the verifier forever ---------------------------------
#
# ``_protocol._read_no_follow`` opens result.json with O_RDONLY | O_NOFOLLOW but without
# O_NONBLOCK, and checks ``S_ISREG`` only after the open. A checker (or a submission it runs)
# that ``mkfifo``s /output/result.json and exits 0 leaves the verifier blocked in ``open`` with
# no writer left, outside every timeout: the check never returns (measured: still blocked after
# 25 s at ``timeout: 10``; killing the verifier then leaks the /output tmpfs mount). Fix: open
# with O_NONBLOCK (as ``_sha256`` and ``read_regular`` do), then ``fstat`` S_ISREG.

FIFO_CHECKER = 'import os\nos.mkfifo("/output/result.json")\n'


@pytest.mark.slow
def test_a_fifo_result_does_not_hang_the_verifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(FIFO_CHECKER)
    ws = workspace(tmp_path, {"a": "1"})
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))  # the scratch folder goes here
    spec = {"kind": "program", "checker": "check.py", "artifacts": {"a": "a"}, "timeout": 10}
    check, context = build_check(spec), CheckContext(workspace=ws, base_dir=task, sandbox=sandbox())
    thread = threading.Thread(target=check.run, args=(context,), daemon=True)
    thread.start()
    thread.join(20)
    hung = thread.is_alive()
    for fifo in private.glob("assay-checker-*/output/result.json"):  # let a blocked open return
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    thread.join(20)
    assert not hung, "the verifier was still blocked 20 s after a 10 s checker timeout"
    outcome = check.run(context)  # the same run again, for its status: the checker misbehaved
    assert outcome.status is E and "result.json" in outcome.detail, outcome.detail


# 10. `assay verify` reads the submission whole, whatever it is -------------------------------
#
# The submission is the candidate's file, yet ``verify`` reads it with ``Path.read_bytes()``:
# a FIFO hangs the verifier forever, and a symlink to /dev/zero reads until memory runs out
# (bounded here by RLIMIT_AS: "internal error: MemoryError", exit 1; unbounded, it takes the
# host's memory as issue 7 describes for author files). Fix: read it with
# ``assay._files.read_regular`` (regular files only, non-blocking open, capped), exit 2 naming
# the file.


def _limited_address_space() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["fifo", "dev_zero"])
def test_verify_refuses_a_submission_that_is_not_a_regular_file(shape: str, tmp_path: Path) -> None:
    import subprocess

    key = tmp_path / "key.json"
    key.write_text('{"t1": 1}')
    submission = tmp_path / "submission.json"
    if shape == "fifo":
        os.mkfifo(submission)
    else:
        submission.symlink_to("/dev/zero")
    assay = Path(sys.executable).with_name("assay")
    try:
        done = subprocess.run(
            [str(assay), "verify", str(submission), str(key)],
            capture_output=True,
            text=True,
            timeout=15,
            preexec_fn=_limited_address_space,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("assay verify was still reading the submission after 15 s")
    assert done.returncode == 2, done.stderr[-300:]
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr, done.stderr


# 11. Staging follows a folder swapped for a symlink while the workspace is copied -------------
#
# ``snapshot`` runs as root (the verifier) and works on path strings: it lists a folder, then
# opens each subfolder by its full path. An agent process still running beside the
# verification (a leftover background job in its environment) can replace ``ws/sub`` with a
# symlink to any folder root can read (another task's references, a hidden check's folder)
# between the listing and the descent: the staged copy then holds that folder's files, and the
# checked code reads them at /workspace/sub. The test plays the winning swap deterministically.
# Fix: descend by descriptor (``os.open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
# dir_fd=parent)``, ``os.scandir(fd)``, files opened with ``dir_fd``), so a swapped-in link
# fails to open instead of being followed (the same fix as 1 and 6).


def test_staging_never_copies_through_a_swapped_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.sandbox import StagingTooLarge, snapshot

    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "hidden_check.py").write_text("assert answer() == 42\n")
    ws = workspace(tmp_path, {"solution.py": WRONG, "sub/x.txt": "x"})
    real_scandir = os.scandir

    class Listing:
        """os.scandir for the workspace: list it, then let the agent win the race."""

        def __init__(self, path: object) -> None:
            with real_scandir(path) as found:  # type: ignore[call-overload]
                self.entries = list(found)
            sub = ws / "sub"
            if _names(path) == str(ws) and sub.is_dir() and not sub.is_symlink():
                shutil.rmtree(sub)
                sub.symlink_to(secret)

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(os, "scandir", Listing)  # _staging calls os.scandir
    # Depending on when the swap lands, the link is copied as a link (it resolves to nothing
    # in the sandbox) or the copy is refused as a change mid-copy (a finding about the work).
    with contextlib.suppress(StagingTooLarge):
        snapshot(ws, tmp_path / "staged", 1 << 20)
    monkeypatch.undo()
    assert (ws / "sub").is_symlink(), "the swap was never played"
    copied = tmp_path / "staged" / "sub"
    # A link is copied as a link (inside the sandbox it resolves to nothing); never a copy of
    # what it pointed at.
    assert copied.is_symlink() or not os.path.lexists(copied), "root copied the link's target"


# 12. Staging folders of a killed verifier are swept like checker scratch folders ---------------


def test_staging_folders_of_a_killed_verifier_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.sandbox import _sandbox

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    left = Path(tempfile.mkdtemp(prefix="assay-run-999999999-"))  # a dead pid, 0700
    (left / "workspace" / "deep").mkdir(parents=True)
    (left / "workspace" / "deep" / "f").write_text("x")
    alive = Path(tempfile.mkdtemp(prefix=f"assay-run-{os.getpid()}-"))
    _sandbox._sweep_folders_once.cache_clear()
    try:
        assert _sandbox._sweep_folders_once() == 1
    finally:
        _sandbox._sweep_folders_once.cache_clear()
    assert not left.exists() and alive.exists()


@pytest.mark.slow
@pytest.mark.parametrize("channel", ["fd", "file"])
def test_conformance_runs_with_the_checkers_result_channel(channel: str, tmp_path: Path) -> None:
    """The SAT example checker, rewritten to conclude on descriptor 3, reproduces its fixtures
    over "fd" and none over "file" (its /output/result.json is never written)."""
    from assay.sandbox._conform import conform

    example = Path(__file__).parents[2] / "examples" / "checkers" / "sat"
    source = (example / "check.py").read_text()
    old = '(OUTPUT / "result.json").write_text(json.dumps('
    assert old in source
    checker = tmp_path / "check.py"
    checker.write_text(
        source.replace(old, "os.write(3, str.encode(json.dumps(", 1).replace(
            "**extra}))\n", "**extra})))\n", 1
        )
    )
    results = conform(checker, example / "fixtures", result_channel=channel)
    reproduced = sum(r.passed for r in results)
    assert reproduced == (len(results) if channel == "fd" else 0), [r.detail for r in results]
