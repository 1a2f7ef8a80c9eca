"""Adversary 3, the faster sandbox: what crosses between runs, the judge's folder, the cgroup join.

The sandbox was made faster (``sandperf``): the run's shell joins its v1 cgroup thread by thread
(``0`` into ``tasks``), the judge runs from a compiled folder on the host mounted at ``/.assay``,
a run is started before its control message (``Sandbox.prepare``) and, on ``Sandbox(warm=True)``,
ahead of time, while other checks run. Each class below is a way a wrong answer could be called
``verified`` or masked, or one check could reach another; the first four were holes and are
fixed, the others held and are pinned here.

- Found: a process forked from the verifier (``multiprocessing``'s default on Linux, any
  ``os.fork``) kept a copy of every waiting run's control pipe; the judge read its control
  message to the pipe's end of file, so it waited for that process and the check timed out:
  inconclusive, whatever the answer. The control message now carries its length.
- Found: the judge's folder was checked for its owner, modes and file names, not for what the
  files held: a ``runner.pyc`` of the right size that reports ``completed`` for any check was run
  (``assert False`` verified). Its contents are now compared with what this verifier would
  write, and a folder that differs is made again.
- Found: the judge's folder and the protected bash were checked once and then used by path for
  the life of the process. They sit in the world-writable temporary folder: should they vanish
  (a /tmp cleaner), another user could make a folder of the same name holding a judge of their
  own, and every later check ran it. Each use now checks they are still the very ones checked.
- Found: with bwrap in a user namespace (assay run by a normal user), the sandbox's root and
  ``/etc`` were the sandbox user's own: the checked code could create ``/etc/ld.so.preload`` and
  run its code in every later process of the check. The root is now remounted read-only.
- Held: threads. Every thread of a run is in its cgroup (memory, pids, CPU accounting).
- Held: a candidate cannot reach the run waiting for the next check, nor leave it anything.
- Held: what a candidate raises or prints cannot pass for the judge's own frames or verdict.
"""

from __future__ import annotations

import contextlib
import importlib.util
import marshal
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assay import CheckContext, Status, build_check
from assay.sandbox import Limits, Sandbox, runner_control
from assay.sandbox import _judge_files as judge_files
from assay.sandbox._prepared import Prepared
from assay.sandbox._staging import SANDBOX_UID

pytestmark = pytest.mark.skipif(
    Sandbox().isolation != "bwrap", reason="bubblewrap is not installed"
)

WRONG = "def answer():\n    return 41\n"
RIGHT = "def answer():\n    return 42\n"
CHECK = {"kind": "python", "code": "from solution import answer\nassert answer() == 42"}


def _workspace(root: Path, source: str) -> Path:
    folder = root / "ws"
    folder.mkdir(exist_ok=True)
    (folder / "solution.py").write_text(source)
    return folder


@pytest.fixture
def warm() -> Iterator[Sandbox]:
    sandbox = Sandbox(backend="bwrap", warm=True)
    yield sandbox
    sandbox.close()


def _waiting(sandbox: Sandbox, seconds: float = 20) -> list[Prepared]:
    """The runs waiting in ``sandbox``, once its background thread has started one."""
    pool = sandbox._warm
    assert pool is not None
    deadline = time.monotonic() + seconds
    while True:
        runs = [run for waiting in pool._waiting.values() for _, run in waiting]
        if runs or time.monotonic() > deadline:
            return runs
        time.sleep(0.02)


@contextlib.contextmanager
def _forked_child() -> Iterator[int]:
    """A copy of this process that holds every descriptor it had, doing nothing, until the
    block ends (as a ``multiprocessing`` worker forked by the verifier would)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        time.sleep(60)
        os._exit(0)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


# -- Found: a forked verifier process stalled a waiting run's judge ---------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "expected"),
    [(WRONG, Status.REFUTED), (RIGHT, Status.VERIFIED)],
    ids=["wrong", "right"],
)
def test_a_fork_of_the_verifier_does_not_stall_a_warm_run(
    warm: Sandbox, tmp_path: Path, source: str, expected: Status
) -> None:
    workspace = _workspace(tmp_path, source)
    check = build_check({**CHECK, "timeout": 5})
    assert check.run(CheckContext(workspace=workspace, sandbox=warm)).status is expected
    assert _waiting(warm), "no run was started ahead of time"
    with _forked_child():
        started = time.monotonic()
        outcome = check.run(CheckContext(workspace=workspace, sandbox=warm))
    assert outcome.status is expected, outcome.detail
    assert time.monotonic() - started < 4


@pytest.mark.parametrize("code", ["assert 1 + 1 == 2", "assert 1 + 1 == 3"])
def test_a_fork_of_the_verifier_does_not_stall_a_prepared_run(code: str) -> None:
    sandbox = Sandbox(backend="bwrap")
    with (
        sandbox.prepare(
            sandbox.python_argv(), cwd="/tmp", limits=Limits(timeout=4), waits=True
        ) as prepared,
        _forked_child(),
    ):
        control, nonce = runner_control("python", code, "<t>", "/tmp")
        result = prepared.run(control, nonce)
    assert result.limit is None, result.output
    assert result.started
    assert result.completed is ("== 2" in code), result.output


# -- Found: the judge's folder was used whatever its files held -------------------------------


@pytest.fixture
def own_judge_folder(tmp_path: Path) -> Iterator[Path]:
    """A judge folder of this test's own (never the one other runs on this machine use), in a
    temporary folder anyone may write to, as /tmp."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    os.chmod(temporary, 0o1777)
    os.chmod(tmp_path, 0o755)
    saved = tempfile.tempdir
    tempfile.tempdir = str(temporary)
    judge_files.forget()
    try:
        folder = judge_files.judge_folder()
        assert folder is not None and folder.is_relative_to(temporary)
        yield folder
    finally:
        tempfile.tempdir = saved
        judge_files.forget()


FORGED_RUNNER = """
import os, sys, marshal
control, done = int(sys.argv[1]), int(sys.argv[2])
data = b""
while True:
    chunk = os.read(control, 65536)
    if not chunk:
        break
    data += chunk
nonce = marshal.loads(data[8:])["nonce"]
os.write(done, f"{nonce} started\\n{nonce} completed\\n".encode())
"""


def _forged_pyc(size: int) -> bytes:
    """A runner that reports every check completed, padded to ``size`` bytes."""
    code = compile(FORGED_RUNNER, "/.assay/runner.py", "exec")
    data = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)
    assert len(data) <= size
    return data + bytes(size - len(data))


def _flipped(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x20]) + data[middle + 1 :]


POISONS: dict[str, Callable[[bytes], bytes]] = {
    "runner.pyc forged": lambda data: _forged_pyc(len(data)),
    "runner.pyc one byte": _flipped,
    "_proxy.code one byte": _flipped,
    "_tests.code truncated": lambda data: data[: len(data) // 2],
    "_candidate.py one byte": _flipped,
}


@pytest.mark.parametrize("poison", POISONS)
def test_a_judge_folder_whose_files_changed_is_never_run(
    own_judge_folder: Path, tmp_path: Path, poison: str
) -> None:
    name = poison.split()[0]
    target = own_judge_folder / name
    original = target.read_bytes()
    target.write_bytes(POISONS[poison](original))
    os.chmod(target, 0o644)  # same name, owner and mode: only the content differs
    judge_files.forget()  # as a verifier process started now
    folder = judge_files.judge_folder()
    assert folder is not None
    assert (folder / name).read_bytes() == original
    sandbox = Sandbox(backend="bwrap")
    workspace = _workspace(tmp_path, WRONG)
    outcome = build_check(CHECK).run(CheckContext(workspace=workspace, sandbox=sandbox))
    assert outcome.status is Status.REFUTED, outcome.detail


@pytest.mark.parametrize("poison", ["one byte", "truncated"])
def test_a_protected_bash_whose_content_changed_is_made_again(
    own_judge_folder: Path, poison: str
) -> None:
    bash = judge_files.protected_bash()
    assert bash is not None
    original = bash.read_bytes()
    changed = _flipped(original) if poison == "one byte" else original[:4096]
    bash.write_bytes(changed)
    os.chmod(bash, 0o711)
    judge_files.forget()
    again = judge_files.protected_bash()
    assert again is not None and again.read_bytes() == original


def _replace_judge(folder: Path, owner: int, runner: bytes) -> None:
    """``folder`` and its parent gone (a /tmp cleaner) and made again by ``owner``, holding the
    same files but ``runner.pyc``."""
    files = {path.name: path.read_bytes() for path in folder.iterdir()}
    files["runner.pyc"] = runner
    shutil.rmtree(folder.parent)
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
        os.chmod(folder / name, 0o644)
    for path in (folder.parent, folder, *folder.iterdir()):
        os.chown(path, owner, owner)


@pytest.mark.parametrize("owner", ["another user", "this user"])
def test_a_judge_folder_replaced_after_it_was_checked_is_never_run(
    own_judge_folder: Path, tmp_path: Path, owner: str
) -> None:
    sandbox = Sandbox(backend="bwrap")
    workspace = _workspace(tmp_path, WRONG)
    check = build_check(CHECK)
    assert check.run(CheckContext(workspace=workspace, sandbox=sandbox)).status is Status.REFUTED
    forged = _forged_pyc(len((own_judge_folder / "runner.pyc").read_bytes()))
    _replace_judge(
        own_judge_folder, SANDBOX_UID if owner == "another user" else os.getuid(), forged
    )
    outcome = check.run(CheckContext(workspace=workspace, sandbox=sandbox))
    assert outcome.status is Status.REFUTED, outcome.detail


def test_a_protected_bash_replaced_after_it_was_checked_is_never_run(
    own_judge_folder: Path,
) -> None:
    bash = judge_files.protected_bash()
    assert bash is not None
    original = bash.read_bytes()
    os.unlink(bash)
    bash.write_bytes(b"#!/bin/sh\nexit 0\n".ljust(len(original), b"#"))
    os.chmod(bash, 0o711)  # root's and 0711, the right size: another file all the same
    again = judge_files.protected_bash()
    assert again is not None and again.read_bytes() == original


# -- Found: a user-namespace sandbox's root was the checked code's to write -------------------

PLANTS = {
    "ld.so.preload": "touch /etc/ld.so.preload",
    "preload as a link": "ln -s /tmp/evil.so /etc/ld.so.preload",
    "a file at the root": "touch /sitecustomize.py",
    "a folder at the root": "mkdir /planted",
    "a new folder beside the workspace": "mkdir /workspace2",
}


@pytest.mark.parametrize("plant", PLANTS)
def test_the_root_of_a_user_namespace_sandbox_is_read_only(
    own_judge_folder: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    # As a normal user the sandbox runs in a user namespace (``--unshare-user``), where what
    # bwrap made is the sandbox user's own; root takes that path when it believes it is not.
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    sandbox = Sandbox(backend="bwrap")
    script = f"id -u; {PLANTS[plant]} && echo PLANTED; touch /tmp/scratch && echo SCRATCH"
    result = sandbox.run(["/bin/sh", "-c", script])
    assert "SCRATCH" in result.output, result.output  # /tmp stays the run's to write
    assert "PLANTED" not in result.output, result.output


# -- Held: every thread of a run is in its cgroup ---------------------------------------------

THREADED = {
    "memory": (
        "import threading\nbox = []\n"
        "def grow():\n    while True: box.append(bytearray(8 << 20))\n"
        "t = threading.Thread(target=grow); t.start(); t.join()\n",
        Limits(memory_mb=150, timeout=20),
        "memory",
    ),
    "cpu": (
        "import threading, time\n"
        "def burn():\n    while True: pass\n"
        "for _ in range(3): threading.Thread(target=burn, daemon=True).start()\n"
        "time.sleep(30)\n",
        Limits(timeout=20, cpu_seconds=1),
        "cpu",
    ),
    "processes": (
        "import threading, time\nkept = []\n"
        "def spawn():\n"
        "    while True:\n"
        "        t = threading.Thread(target=time.sleep, args=(30,), daemon=True)\n"
        "        t.start(); kept.append(t)\n"
        "t = threading.Thread(target=spawn); t.start(); t.join()\n"
        "raise SystemExit(3)\n",
        Limits(timeout=20, processes=24),
        "processes",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["cold", "warm"])
@pytest.mark.parametrize("what", THREADED)
def test_threads_are_counted_in_the_runs_cgroup(what: str, shape: str) -> None:
    code, limits, limit = THREADED[what]
    sandbox = Sandbox(backend="bwrap", warm=shape == "warm")
    if sandbox.memory_limit == "rlimit-as":
        pytest.skip("no cgroup can be made here")
    try:
        for _ in range(2 if shape == "warm" else 1):  # warm: the second one was started ahead
            started = time.monotonic()
            with sandbox.prepare(
                sandbox.python_argv(), cwd="/tmp", limits=limits, waits=True
            ) as prepared:
                control, nonce = runner_control("python", code, "<t>", "/tmp")
                result = prepared.run(control, nonce)
            assert result.limit == limit, (result.limit, result.output[-500:])
            assert time.monotonic() - started < 15
    finally:
        sandbox.close()


MANY_THREADS = """
import subprocess, sys, threading, time
for _ in range(4):
    threading.Thread(target=time.sleep, args=(20,), daemon=True).start()
child = "import threading, time\\nfor _ in range(3): threading.Thread(target=time.sleep, args=(20,)).start()"
subprocess.Popen([sys.executable, "-c", child], start_new_session=True)
time.sleep(20)
"""


def _descendants(root: int) -> set[int]:
    """``root`` and every process below it, from the host's /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, queue = set(), [root]
    while queue:
        pid = queue.pop()
        found.add(pid)
        queue += children.get(pid, [])
    return found


def _threads(pids: set[int]) -> set[int]:
    tids: set[int] = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            tids |= {int(t) for t in os.listdir(f"/proc/{pid}/task")}
    return tids


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["cold", "warm"])
def test_every_thread_of_a_run_is_in_each_of_its_cgroups(shape: str) -> None:
    sandbox = Sandbox(backend="bwrap", warm=shape == "warm", zygote=False)  # bwrap-started runs
    if sandbox.memory_limit != "cgroup-v1":
        pytest.skip("the per-thread join is v1's")
    limits = Limits(timeout=40)
    try:
        if shape == "warm":  # the second run of this shape was started ahead of time
            sandbox.prepare(sandbox.python_argv(), cwd="/tmp", limits=limits, waits=True).close()
            assert _waiting(sandbox)
        with sandbox.prepare(
            sandbox.python_argv(), cwd="/tmp", limits=limits, waits=True
        ) as prepared:
            cgroup = prepared._cgroup
            assert cgroup is not None
            control, nonce = runner_control("python", MANY_THREADS, "<t>", "/tmp")
            runner = threading.Thread(target=prepared.run, args=(control, nonce))
            runner.start()
            try:
                deadline, tids = time.monotonic() + 20, set()
                while time.monotonic() < deadline:  # bwrap, its init, judge + 4, zygote, child + 3
                    tids = _threads(_descendants(prepared.process.pid))
                    if len(tids) >= 12:
                        break
                    time.sleep(0.1)
                assert len(tids) >= 12, tids
                for folder in cgroup._folders:
                    members = {int(t) for t in (folder / "tasks").read_text().split()}
                    assert tids <= members, (folder, tids - members)
            finally:
                prepared.kill()
                runner.join(timeout=20)
    finally:
        sandbox.close()


# -- Held: a candidate cannot reach the run waiting for the next check ------------------------

REACHES = {
    "kill -1": "import os, signal\nos.kill(-1, signal.SIGKILL)",
    "stop -1": "import os, signal\nos.kill(-1, signal.SIGSTOP)",
    "every pid": (
        "import os, signal\n"
        "for pid in range(2, 5000):\n"
        "    try: os.kill(pid, signal.SIGKILL)\n"
        "    except OSError: pass"
    ),
    "fill tmp and leave a daemon": (
        "import subprocess\nopen('/tmp/left', 'wb').write(b'x' * (1 << 20))\n"
        "subprocess.Popen(['sleep', '60'], start_new_session=True)"
    ),
    "find other runs": (
        "import os\n"
        "seen = [l for l in open('/proc/self/mountinfo') if 'assay-run-' in l]\n"
        "for line in seen:\n"
        "    for word in line.split():\n"
        "        if 'assay-run-' in word and os.path.exists(word):\n"
        "            open(word + '/planted', 'w')\n"
        "assert not os.path.exists('/sys/fs/cgroup/memory')"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("reach", REACHES)
def test_a_candidate_cannot_reach_the_run_waiting_for_the_next_check(
    warm: Sandbox, tmp_path: Path, reach: str
) -> None:
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    (attacker / "solution.py").write_text(
        f"def answer():\n    exec({REACHES[reach]!r}, {{}})\n    return 41\n"
    )
    # A stopped judge times out: with the limits as rules that refutes (as stalling does).
    check = build_check({**CHECK, "timeout": 3, "limits_are_rules": True})
    assert check.run(CheckContext(workspace=attacker, sandbox=warm)).status is Status.REFUTED
    waiting = _waiting(warm)
    assert waiting, "no run was started ahead of time"
    assert all(run.alive() for run in waiting)
    honest = _workspace(tmp_path, RIGHT)
    probe = build_check(
        {
            "kind": "python",
            "code": "import os\nfrom solution import answer\nassert answer() == 42\n"
            "assert not os.listdir('/tmp'), os.listdir('/tmp')\n"
            "assert sorted(os.listdir('/workspace')) == ['solution.py']\n",
            "timeout": 3,  # the attacker's shape: its waiting run is the one used
        }
    )
    outcome = probe.run(CheckContext(workspace=honest, sandbox=warm))
    assert outcome.status is Status.VERIFIED, outcome.detail
    assert waiting[0].control < 0, "the run waiting after the attacker's was not the one used"


# -- Held: what a candidate raises or prints cannot pass for the judge's own ------------------

FORGERIES = {
    "runner frames in a message": (
        'def answer():\n    raise ValueError(\'File "/.assay/runner.py", line 1\\n'
        "assay: refuted: none\\n')"
    ),
    "code compiled as the runner": (
        "def answer():\n    exec(compile('raise AssertionError(1)', '/.assay/runner.py', 'exec'))"
    ),
    "code compiled as a helper": (
        "def answer():\n"
        "    exec(compile('return_value = 42', '/.assay/_proxy.py', 'exec'), globals())\n"
        "    return 41"
    ),
    "printed verdict words": (
        "import sys\ndef answer():\n"
        "    print('started\\ncompleted\\nassay-candidate-output x\\n')\n"
        "    sys.stdout.flush()\n    return 41"
    ),
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_candidate_cannot_pass_for_the_judges_frames(tmp_path: Path, forgery: str) -> None:
    workspace = _workspace(tmp_path, FORGERIES[forgery])
    outcome = build_check(CHECK).run(
        CheckContext(workspace=workspace, sandbox=Sandbox(backend="bwrap"))
    )
    assert outcome.status is Status.REFUTED, outcome.detail
