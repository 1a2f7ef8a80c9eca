"""Found by the adversarial review of the sandbox boundary (helper "adv-boundary"): per-run
cgroups, the seccomp filter, limits named from the parent's observations, capped folders and
staging (issue 7 "Masking" and "Robustness", issue 15 items 2 and 5, issue 17 item 4).

Every test states the status the attack must get and is marked ``xfail(strict=True)`` until the
class is closed: when a fix lands, the xfail turns into an unexpected pass and must be removed.
Each attack is a wrong solution (the answer is 41, the check wants 42); the checks are what an
honest task author writes.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from assay import CheckContext, Config, build_check
from assay.sandbox import Limits, Sandbox
from assay.sandbox._cgroup import hierarchy
from tests.adversarial.code_checks import run, sandbox, workspace
from tests.helpers import R

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


@found(
    "ENAMETOOLONG while staging a workspace escapes snapshot(): wrong work is `error`; stage "
    "with dir_fd-relative calls and make any copy failure a finding about the workspace"
)
@pytest.mark.slow
@pytest.mark.parametrize("rules", [True, False], ids=["limits_are_rules", "default"])
def test_a_workspace_with_paths_too_long_to_stage(
    rules: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path, {"solution.py": WRONG})
    _long_paths(ws)
    monkeypatch.chdir(tmp_path)  # `assay check --workspace ws`: a relative workspace path
    check = build_check({"kind": "python", "code": CHECK, "limits_are_rules": rules})
    outcome = check.run(CheckContext(workspace=Path("ws"), sandbox=sandbox()))
    assert outcome.status is R, outcome.detail[:200]


@found(
    "ENAMETOOLONG while staging a program's artifacts escapes stage_input(): `error`; stage "
    "with dir_fd-relative calls and refute a submission that cannot be staged"
)
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
            "timeout": 20,
            "memory_mb": 256,
        }
        context = CheckContext(workspace=ws, base_dir=task, sandbox=sandbox())
        outcome = build_check(spec).run(context)
    finally:
        shutil.rmtree(ws)
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


@found(
    "staging caps (depth, entries, max_staged_mb) give inconclusive even with "
    "limits_are_rules: true; they must refute like every other limit"
)
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
# the sandbox is torn down, after the checker wrote "refuted" and exited 0. Measured: verified
# 5 times out of 5. The checker cannot protect itself: the seccomp filter (rightly) forbids the
# namespaces it would need for a sandbox of its own, and there is no second uid. Fix: the
# verdict travels on a descriptor only the checker's first process holds (e.g. fd 3, a pipe the
# parent reads; subprocess's default close_fds keeps it from the submission), or assay offers
# checkers a helper that runs a submission in a separate sandbox (other uid, no /output), and
# the README says which.

CHECKER = """\
import json, subprocess, sys
from pathlib import Path
out = subprocess.run(["python3", "/input/artifacts/program/solve.py"],
                     capture_output=True, text=True, timeout=10)
ok = out.stdout.strip() == "42"
Path("/output/result.json").write_text(json.dumps(
    {"result": "verified" if ok else "refuted", "summary": "printed " + out.stdout.strip()[:20]}))
sys.exit(0)
"""

FORGER = """\
import json, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        data = json.dumps({"result": "verified", "summary": "forged"})
        end = time.monotonic() + 8
        while time.monotonic() < end:
            try:
                with open("/output/.r", "w") as f:
                    f.write(data)
                os.replace("/output/.r", "/output/result.json")
            except OSError:
                pass
    os._exit(0)
print(41)
"""


@found(
    "a checker that runs the submission shares /output with it: the submission forges "
    "result.json and a wrong program is verified; carry the verdict on a descriptor only the "
    "checker holds, or run submissions in a separate sandbox"
)
@pytest.mark.slow
def test_a_submission_run_by_its_checker_forges_the_result(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(CHECKER)
    ws = workspace(tmp_path, {"solve.py": FORGER})
    spec = {
        "kind": "program",
        "checker": "check.py",
        "artifacts": {"program": "solve.py"},
        "timeout": 20,
        "memory_mb": 256,
    }
    outcome = build_check(spec).run(CheckContext(workspace=ws, base_dir=task, sandbox=sandbox()))
    assert outcome.status is R, outcome.detail


KILLER = """\
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
print(41)
"""


@found(
    "a submission run by its checker kills the checker (same uid, same sandbox): `error` "
    '("the checker was killed"), which no policy refutes; run submissions apart from the checker'
)
@pytest.mark.slow
def test_a_submission_run_by_its_checker_kills_it(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(CHECKER)
    ws = workspace(tmp_path, {"solve.py": KILLER})
    spec = {
        "kind": "program",
        "checker": "check.py",
        "artifacts": {"program": "solve.py"},
        "timeout": 20,
        "memory_mb": 256,
    }
    outcome = build_check(spec).run(CheckContext(workspace=ws, base_dir=task, sandbox=sandbox()))
    assert outcome.status is R, outcome.detail


# 4. A sacrificial process hits a real limit; the wrong answer is then masked ------------------
#
# A limit is named whenever the run failed and the cgroup's counters moved, whatever failed:
# the candidate exhausts the task budget with threads it does not need (or forks a child that
# is OOM-killed), then returns 41; the judge's assertion fails on the returned value, and the
# outcome is "inconclusive: the checked code hit the process limit" (or the memory limit). By
# default this is what stalling would also get (a timeout is inconclusive), but instantly and
# with a false cause. Fix: the judge reports over its nonce channel that the check itself
# failed on a value it received (an AssertionError or a failed test in the check's own
# frames, not a proxy error from a dead candidate); the parent then refutes whatever the
# counters say, and names a limit only when the judge's own call into the candidate failed.
# Instance "huge_return": the candidate returns 150 MiB of text under memory_mb 128; a process
# of the run (candidate or judge) is OOM-killed while it crosses, and the wrong value is never
# compared. Fix: the proxy caps
# what may cross back (a reply over a fraction of memory_mb is refuted as too large to judge,
# read in bounded chunks before it is built).

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
    return "x" * (150 << 20)
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
}


@found(
    "a sacrificial thread flood or OOM-killed child makes a failed assertion on a returned "
    "value inconclusive; a limit must not override a verdict the judge reached itself"
)
@needs_cgroup
@pytest.mark.parametrize("name", sorted(SACRIFICES))
def test_a_sacrificial_limit_masks_a_wrong_answer(name: str, tmp_path: Path) -> None:
    spec = {"kind": "python", "code": CHECK, "memory_mb": 128}
    outcome = run(tmp_path, {"solution.py": SACRIFICES[name]}, spec)
    assert outcome.status is R, outcome.detail


# 5. "cpu" is named from the whole cgroup's CPU time, but RLIMIT_CPU is per process ------------
#
# Two processes each use 0.7 s of CPU under a 1 s limit (neither is near it) and the run
# fails: the parent reports the CPU limit (cgroup total 1.4 s >= 0.95 s). Any parallel
# solution that fails is misreported as a CPU limit. Fix: compare the cgroup total with a
# whole-run CPU budget enforced on the cgroup (cpu.max / a parent-side kill at that total), or
# name "cpu" only when a process of the run was killed by SIGXCPU/SIGKILL and the parent
# measured that process's own CPU time (wait4 rusage of the reaped process) at the limit.


@found(
    "the CPU limit is named from the cgroup's total CPU time while RLIMIT_CPU binds per "
    "process: two processes at 0.7 s of a 1 s limit are reported as the CPU limit"
)
@needs_cgroup
def test_cpu_time_summed_over_processes_is_not_the_cpu_limit() -> None:
    burn = "import time\nwhile time.process_time() < 0.7: pass"
    py = os.path.realpath(sys.executable)
    command = f"{py} -c '{burn}' & {py} -c '{burn}' & wait; exit 1"
    limits = Limits(timeout=20, cpu_seconds=1, memory_mb=256)
    result = Sandbox(backend="bwrap").run(["/bin/sh", "-c", command], limits=limits)
    assert result.exit_code == 1, result.output
    assert result.limit is None, (result.limit, result.cpu_seconds)


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


@found(
    "the stale-scratch sweep runs remove_tree (path-based) as root over attacker-created "
    "folders in the shared tmp: a dir swapped for a symlink makes it delete and chmod the "
    "link's target; sweep only own 0700 folders and descend by dir_fd with O_NOFOLLOW"
)
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
    real_scandir = os.scandir

    class Listing:
        """os.scandir for the planted folder: list it, then let the attacker win the race."""

        def __init__(self, path: object) -> None:
            with real_scandir(path) as found:  # type: ignore[call-overload]
                self.entries = list(found)
            if str(path) == str(planted) and (planted / "a").is_dir():
                (planted / "a").rmdir()
                (planted / "a").symlink_to(victim)

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(os, "scandir", Listing)  # _folders calls os.scandir
    _folders.sweep_stale(shared, "assay-checker-", lambda pid: False)
    monkeypatch.undo()
    assert (victim / "precious.txt").exists(), "the sweep deleted a file through a symlink"
    assert victim.stat().st_mode & 0o777 == 0o755


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


@found(
    "socket(AF_VSOCK) is allowed in the sandbox; vsock is not isolated by --unshare-net "
    "(reachability not tried: loopback-only rule); refuse non-IP, non-unix families in seccomp"
)
@pytest.mark.skipif(not _host_has_vsock(), reason="this kernel has no AF_VSOCK sockets at all")
def test_a_vsock_socket_cannot_be_created() -> None:
    py = os.path.realpath(sys.executable)
    result = Sandbox(backend="bwrap").run(
        [py, "-I", "-S", "-c", VSOCK], limits=Limits(timeout=20, memory_mb=256)
    )
    assert result.output.startswith("refused"), result.output


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


@found(
    "sparse evidence files make the verifier hash up to 1,000 x 64 MiB outside any limit; "
    "cap the total hashed at /output's size"
)
def test_sparse_evidence_is_not_hashed_past_the_output_cap(tmp_path: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(SPARSE_CHECKER)
    ws = workspace(tmp_path, {"a": "1"})
    spec = {"kind": "program", "checker": "check.py", "artifacts": {"a": "a"}, "timeout": 20}
    outcome = build_check(spec).run(CheckContext(workspace=ws, base_dir=task, sandbox=sandbox()))
    hashed = sum(f["size"] for f in (outcome.evidence or {}).get("evidence_files", []))
    assert hashed <= 64 * 1024 * 1024, (outcome.status, hashed)


# 9. A FIFO as /output/result.json hangs the verifier forever ---------------------------------
#
# ``_protocol._read_no_follow`` opens result.json with O_RDONLY | O_NOFOLLOW but without
# O_NONBLOCK, and checks ``S_ISREG`` only after the open. A checker (or a submission it runs)
# that ``mkfifo``s /output/result.json and exits 0 leaves the verifier blocked in ``open`` with
# no writer left, outside every timeout: the check never returns (measured: still blocked after
# 25 s at ``timeout: 10``; killing the verifier then leaks the /output tmpfs mount). Fix: open
# with O_NONBLOCK (as ``_sha256`` and ``read_regular`` do), then ``fstat`` S_ISREG.

FIFO_CHECKER = 'import os\nos.mkfifo("/output/result.json")\n'


@found(
    "a FIFO at /output/result.json blocks the verifier's open() forever (no O_NONBLOCK in "
    "_read_no_follow); open non-blocking and check S_ISREG on the descriptor"
)
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


@found(
    "`assay verify` reads the candidate's submission with read_bytes(): a FIFO hangs it and "
    "/dev/zero exhausts memory; read it with read_regular (capped, regular files only)"
)
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
            timeout=30,
            preexec_fn=_limited_address_space,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("assay verify was still reading the submission after 30 s")
    assert done.returncode == 2, done.stderr[-300:]
