"""What a sandbox template may hold: exactly the capabilities that making a run's sandbox needs.

The template (``assay.sandbox._template``) is a long-lived root process started by bubblewrap
as real root, so it lives in the host's (the initial) user namespace: every capability it holds
is a real one. It asks bubblewrap for six (``_sandbox._TEMPLATE_CAPS``). bubblewrap 0.8, run by
real root, ignores a failing ``capset`` (it tolerates EPERM for uid 0): where the verifier's own
bounding set lacks one of the six (CAP_SYS_RESOURCE, in containers that drop it), bubblewrap
silently left the template, and each run's init until its drop, with EVERY capability the
verifier has (CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_SYS_MODULE, CAP_SYS_RAWIO...). The template
now narrows its own sets to the six itself. Each instance reads the template's status from the
host; one shows bubblewrap's behaviour directly, so the test can fail.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from assay.sandbox._sandbox import _TEMPLATE_CAPS, bwrap_path
from tests.sandbox.zygote_helpers import judge_run, template_pids, zygote_sandbox

CAP_NUMBERS = {
    "CAP_SETGID": 6,
    "CAP_SETUID": 7,
    "CAP_SETPCAP": 8,
    "CAP_NET_ADMIN": 12,
    "CAP_SYS_ADMIN": 21,
    "CAP_SYS_RESOURCE": 24,
}
ALLOWED = sum(1 << CAP_NUMBERS[name] for name in _TEMPLATE_CAPS)


def _caps(pid: int | str) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {
        line.split(":")[0]: int(line.split()[1], 16) for line in status if line.startswith("Cap")
    }


def _names(mask: int) -> list[int]:
    return [bit for bit in range(64) if mask >> bit & 1]


@pytest.fixture(scope="module")
def template() -> int:
    sandbox = zygote_sandbox()
    result = judge_run(sandbox, "pass")
    assert result.completed, result.output
    pids = template_pids()
    assert pids, "no template process found"
    return pids[0]


def test_all_caps_set_names_the_template_caps() -> None:
    assert set(_TEMPLATE_CAPS) == set(CAP_NUMBERS)


@pytest.mark.parametrize("capability_set", ["CapEff", "CapPrm", "CapInh", "CapAmb"])
def test_the_template_holds_only_what_making_a_sandbox_needs(
    template: int, capability_set: str
) -> None:
    held = _caps(template)[capability_set]
    assert held & ~ALLOWED == 0, f"{capability_set}: extra capabilities {_names(held & ~ALLOWED)}"


def test_the_template_is_in_the_hosts_user_namespace(template: int) -> None:
    """Why the above matters: its capabilities are not namespaced ones."""
    assert os.readlink(f"/proc/{template}/ns/user") == os.readlink("/proc/self/ns/user")


def test_the_template_still_makes_sandboxes(template: int) -> None:
    sandbox = zygote_sandbox()
    probe = (
        "status = open('/proc/self/status').read()\n"
        "assert 'CapEff:\\t0000000000000000' in status and 'CapBnd:\\t0000000000000000' in status\n"
        "assert 'Seccomp:\\t2' in status and 'NoNewPrivs:\\t1' in status\n"
    )
    result = judge_run(sandbox, probe)
    assert result.completed, result.output


def test_bubblewrap_as_root_keeps_everything_when_one_cap_is_missing() -> None:
    """The cause, shown directly: a cap outside this process's bounding set makes bubblewrap
    (real root) leave every capability in place instead of failing."""
    bwrap = bwrap_path()
    if bwrap is None or os.geteuid() != 0:
        pytest.skip("needs bubblewrap run by root")
    own = _caps("self")
    missing = [bit for bit in range(41) if not own["CapBnd"] >> bit & 1]
    if not missing:
        pytest.skip("this machine's bounding set has every capability: nothing to show")
    command = [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--cap-drop", "ALL"]
    command += ["--cap-add", f"{missing[0]}", "--", "grep", "CapEff", "/proc/self/status"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if shown.returncode != 0:
        pytest.skip(f"bubblewrap refused the missing capability: {shown.stderr.strip()}")
    effective = int(shown.stdout.split()[1], 16)
    assert effective == own["CapEff"], "bubblewrap no longer keeps everything: revisit this file"


def test_a_runs_init_keeps_nothing_while_the_check_runs(template: int) -> None:
    """The run's init (the template's child, pid 1 of the run) as the host sees it mid-run:
    no capability in any set (root without any, as bubblewrap's init, or the sandbox uid),
    no_new_privs and the filter."""
    import threading

    from tests.sandbox.zygote_helpers import descendants

    sandbox = zygote_sandbox()
    ended: list[object] = []

    def run() -> None:
        try:
            ended.append(judge_run(sandbox, "import time\ntime.sleep(8)"))
        except BaseException as exc:  # shown in the assertion below, not lost in the thread
            ended.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        inits: list[int] = []
        for _ in range(600):  # up to 30 s: a loaded machine starts the run late
            # the templates now: the suite shares them, and one that served its quota of runs
            # is retired and replaced, so the fixture's may no longer be the one that forks
            templates = {template, *template_pids()}
            inits = [p for t in templates for p in descendants(t) if _parent_of(p) == t and p != t]
            if inits or ended:
                break
            threading.Event().wait(0.05)
        assert inits, f"no run's init found under the templates; the run: {ended}"
        # Found as soon as it is forked, while it still makes the sandbox (trusted code, no
        # check yet: the judge starts the check only after the init dropped): look mid-check.
        threading.Event().wait(1.0)
        for pid in inits:
            status = Path(f"/proc/{pid}/status").read_text()
            caps = _caps(pid)
            assert all(value == 0 for value in caps.values()), (pid, caps)
            uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert uids.split()[1:] in (["0"] * 4, ["65534"] * 4), uids  # root as bubblewrap's
            assert "NoNewPrivs:\t1" in status and "Seccomp:\t2" in status
    finally:
        thread.join()


def _parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0
