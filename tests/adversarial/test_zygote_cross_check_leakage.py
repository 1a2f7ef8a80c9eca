"""Cross-check leakage through a sandbox template: nothing one check does reaches another.

With ``Sandbox(zygote=True)`` (the default) every python and shell check's judge is forked from
one long-lived template (``assay.sandbox._template``). Each instance here has one check plant
something, in the judge and in the candidate's process, wherever it can (files, SysV IPC, the
process's own state, sockets, terminals, processes), then has a later check on the same
template, or one running at the same time, look for it; and reads the template's own memory
(as root, from the host) for the first check's secrets. Every instance is shown to be able to
fail: the planting check confirms its plant from inside.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time

import pytest

from assay.sandbox import RunResult, Sandbox
from tests.sandbox.zygote_helpers import judge_run, template_memory, template_pids, zygote_sandbox


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return zygote_sandbox()


def _both(body: str, name: str) -> tuple[str, str]:
    """A check that runs ``body`` in the judge and, through the proxy, in the candidate's
    process (the workspace's ``leak`` module); and that module."""
    function = f"def {name}():\n{textwrap.indent(textwrap.dedent(body), '    ')}\n"
    check = f"{function}{name}()\nimport leak\nleak.{name}()\nprint('{name} done', flush=True)\n"
    return check, function


def _run_both(sandbox: Sandbox, body: str, name: str, **kwargs: object) -> RunResult:
    check, module = _both(body, name)
    result = judge_run(sandbox, check, {"leak.py": module}, **kwargs)  # type: ignore[arg-type]
    assert result.completed, result.output
    return result


IPC = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
"""

# (what one check plants and confirms, what a later check must then not find)
LEAKS = {
    "a file in /tmp": (
        "import os\nopen('/tmp/assay-leak', 'w').write('x')\nos.makedirs('/tmp/d/e', exist_ok=True)"
        "\nassert os.path.exists('/tmp/assay-leak')",
        "import os\nassert os.listdir('/tmp') == [], os.listdir('/tmp')",
    ),
    "a file in every writable folder": (
        """
        import os
        planted = 0
        for top, folders, _ in os.walk('/'):
            folders[:] = [f for f in folders if not os.statvfs(os.path.join(top, f)).f_flag & 1
                          and os.path.join(top, f) not in ('/proc', '/sys')]
            if os.access(top, os.W_OK):
                open(os.path.join(top, f'assay-leak-{os.getpid()}'), 'w').close()
                planted += 1
        assert planted >= 1
        """,
        """
        import os
        for top, folders, files in os.walk('/'):  # read-only mounts cannot hold one
            folders[:] = [f for f in folders if not os.statvfs(os.path.join(top, f)).f_flag & 1
                          and os.path.join(top, f) not in ('/proc', '/sys')]
            assert not [f for f in files if f.startswith('assay-leak-')], top
        """,
    ),
    "a SysV shared memory segment": (
        IPC + "assert libc.shmget(0x41535301, 4096, 0o1000 | 0o666) >= 0",
        IPC + "assert libc.shmget(0x41535301, 0, 0) == -1",
    ),
    "a SysV message queue": (
        IPC + "assert libc.msgget(0x41535302, 0o1000 | 0o666) >= 0",
        IPC + "assert libc.msgget(0x41535302, 0) == -1",
    ),
    "the process's environment and modules": (
        """
        import os, sys, json, builtins
        os.environ['ASSAY_LEAK'] = '1'
        json.assay_leak = True
        builtins.assay_leak = True
        sys.modules['assay_leak'] = json
        sys.path.append('/tmp/assay-leak')
        """,
        """
        import os, sys, json, builtins
        assert 'ASSAY_LEAK' not in os.environ
        assert not hasattr(json, 'assay_leak') and not hasattr(builtins, 'assay_leak')
        assert 'assay_leak' not in sys.modules and '/tmp/assay-leak' not in sys.path
        """,
    ),
    "limits, umask and signal dispositions": (
        """
        import os, resource, signal
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
        os.umask(0o777)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        """,
        """
        import os, resource, signal
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (256, 256)
        old = os.umask(0o22)
        assert old != 0o777
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        """,
    ),
}


@pytest.mark.parametrize("leak", list(LEAKS))
def test_nothing_a_check_leaves_reaches_the_next_one(sandbox: Sandbox, leak: str) -> None:
    plant, look = LEAKS[leak]
    _run_both(sandbox, plant, "plant")
    _run_both(sandbox, look, "look")


# What a check holds while another, started meanwhile on the same template, looks for it.
HELD = {
    "an abstract unix socket": (
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0assay-leak')\ns.listen()",
        """
        import socket
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect('\\0assay-leak')
            raise AssertionError('reached the other check')
        except (ConnectionRefusedError, FileNotFoundError):
            pass
        """,
    ),
    "a loopback listener": (
        "import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 47613))\ns.listen()",
        """
        import socket
        try:
            socket.create_connection(('127.0.0.1', 47613), timeout=1)
            raise AssertionError('reached the other check')
        except ConnectionRefusedError:
            pass
        """,
    ),
    "a terminal": (
        "import os\ns = os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY)",
        "import os\nassert os.listdir('/dev/pts') == ['ptmx'], os.listdir('/dev/pts')",
    ),
    "a daemon process": (
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(30)
            os._exit(0)
        os.wait()
        """,
        """
        import os
        mine = {os.getpid(), os.getppid(), 1}
        others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in mine]
        assert len(others) <= 1, others  # the judge's or the candidate's other process
        """,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("held", list(HELD))
def test_nothing_a_running_check_holds_reaches_another(sandbox: Sandbox, held: str) -> None:
    plant, look = HELD[held]
    # The holder plants, says when, holds it for 8 s and confirms it still held it.
    holder = (
        textwrap.dedent(plant) + "\nimport time\nprint('planted', time.time(), flush=True)\n"
        "time.sleep(8)\nprint('held', flush=True)\n"
    )
    results: list[RunResult] = []
    thread = threading.Thread(target=lambda: results.append(judge_run(sandbox, holder)))
    thread.start()
    time.sleep(3)
    looker = textwrap.dedent(look) + "\nimport time\nprint('looked', time.time(), flush=True)\n"
    looked = judge_run(sandbox, looker)
    thread.join()
    assert looked.completed, looked.output
    assert results and results[0].completed, results and results[0].output
    planted = float(results[0].output.split("planted ")[1].split()[0])
    at = float(looked.output.split("looked ")[1].split()[0])
    assert planted < at < planted + 8, "the looking check did not run while the other held it"


NAMESPACES = ("mnt", "net", "ipc", "uts", "pid", "cgroup")


@pytest.mark.slow
def test_checks_get_fresh_namespaces_and_random_state(sandbox: Sandbox) -> None:
    """Two checks alive at once, on one template: every namespace of each is its own (and not
    the template's; a freed namespace's number may be reused later), and so is the random state
    of each judge and candidate."""
    probe = textwrap.dedent(f"""
        import os, random, time
        from leak import ids
        print('ids', *[os.readlink(f'/proc/self/ns/{{n}}') for n in {NAMESPACES!r}], *ids(),
              random.getrandbits(64), os.urandom(8).hex(), time.time(), flush=True)
        time.sleep(4)
    """)
    module = textwrap.dedent(f"""
        import os, random
        def ids():
            return [os.readlink(f'/proc/self/ns/{{n}}') for n in {NAMESPACES!r}] + [
                random.getrandbits(64), os.urandom(8).hex()]
    """)
    results: list[RunResult] = []
    thread = threading.Thread(
        target=lambda: results.append(judge_run(sandbox, probe, {"leak.py": module}))
    )
    thread.start()
    time.sleep(1.5)
    second = judge_run(sandbox, probe, {"leak.py": module})
    thread.join()
    first = results[0]
    a, b = (r.output.split("ids ")[1].split() for r in (first, second))
    assert float(b[-1]) < float(a[-1]) + 4, "the checks did not run at the same time"
    template = [os.readlink(f"/proc/{template_pids()[0]}/ns/{n}") for n in NAMESPACES]
    for i in range(len(a) - 1):
        assert a[i] != b[i], (i, a[i])
    for i, name in enumerate(NAMESPACES):
        assert template[i] not in (a[i], b[i], a[len(NAMESPACES) + i]), name


SECRETS = ("nonce", "check code", "workspace file", "candidate output")


@pytest.mark.parametrize("secret", SECRETS)
def test_the_template_never_holds_a_checks_secret_or_bytes(sandbox: Sandbox, secret: str) -> None:
    """Every later check is a copy of the template's memory: it must never have held anything
    of a check (the nonce, the check's code, the workspace, what the candidate printed)."""
    marker = f"assay-marker-{secret.replace(' ', '-')}-{time.time_ns()}"
    nonces: list[str] = []
    check = f"x = {marker[::-1]!r}[::-1]\nimport leak\nleak.say()\n"
    module = f"def say():\n    print({marker[::-1]!r}[::-1] + '-out')\n"
    data = {"leak.py": module, "data.txt": f"{marker[::-1]}"}
    result = judge_run(sandbox, check, data, nonces=nonces)
    assert result.completed, result.output
    needle = {
        "nonce": nonces[0].encode(),
        "check code": marker[::-1].encode(),
        "workspace file": marker[::-1].encode(),
        "candidate output": (marker + "-out").encode(),
    }[secret]
    assert secret != "candidate output" or needle.decode() in result.output  # it was printed
    pids = template_pids()
    assert pids, "no template process found"
    for pid in pids:
        memory = template_memory(pid)
        assert b"assay-none" in memory  # the template's own strings are read: the test can fail
        assert needle not in memory
