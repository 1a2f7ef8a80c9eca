"""Sandbox cost: a bare interpreter spawn, the same through bubblewrap, and a whole python check.

    .venv/bin/python -P benchmarks/sandbox.py            # 60 runs of each, then throughput
    .venv/bin/python -P benchmarks/sandbox.py --runs 20

Prints per-run medians, the sandbox's overhead over a bare spawn (target: at most 25 ms), and
python checks per second with one worker per core (target: at least 50/s on 2 cores). The runs of
each kind are interleaved so that machine noise hits them alike. The overhead is split into its
parts: the run's own cgroup (made, joined by a /bin/sh that then execs bwrap, read, removed; and,
as root, the /tmp tmpfs the parent mounts) and the seccomp filter (compared with the same run
under a filter that allows everything).

A python check is measured on the three ways a judge's run can start: forked from a sandbox
template (``zygote``, the default: ``Config.sandbox_zygote``), bubblewrap and an interpreter
started per check (``bwrap``, ``sandbox_zygote=false``), and the same started ahead of time in
the background (``warm``, ``Sandbox(warm=True)``). Each run gets a sandbox no other run used.

Throughput on 2 cores is bound by the CPU a check costs, so the CPU per python check is measured
too (sequential checks; the verifier's own CPU from ``getrusage``, every run's from a private
parent cgroup's CPU accounting, as root, and the template's own from ``/proc``), per path, with
the bound it sets (cores / CPU per check) and the template's ratio to bubblewrap per check, in
the same run. ``--sandbox-python /usr/bin/python3.11`` adds the same figures with that
interpreter running the judge (``Config.sandbox_python``).

    .venv/bin/python -P benchmarks/sandbox.py --sandbox-python /usr/bin/python3.11
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import assay.sandbox._sandbox as sandbox_module
from assay import Check, CheckContext, Status, build_check
from assay.sandbox import Limits, Sandbox
from assay.sandbox._cgroup import hierarchy
from assay.sandbox._forked import TEMPLATES

PYTHON = os.path.realpath(sys.executable)
ALLOW_ALL = struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000)
"""A seccomp program of one instruction, ``return ALLOW``: the filter's mechanics, no rules."""
CHECK = {"kind": "python", "code": "from solution import add\nassert add(2, 3) == 5"}
"""Imports a workspace module: add runs in the candidate's process, its result crosses back."""
PURE = {"kind": "python", "code": "assert 2 + 3 == 5"}
"""Imports nothing from the workspace: the judge alone, no candidate process woken."""


def _rate(check: Check, context: CheckContext, checks: int, workers: int) -> float:
    """Python checks per second with ``workers`` threads sharing ``context``."""
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda _: check.run(context), range(checks)))
    assert all(o.status is Status.VERIFIED for o in outcomes)
    return checks / (time.perf_counter() - start)


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


_PARENTS = itertools.count()
"""A fresh parent cgroup per measurement (``hierarchy`` remembers the ones it made)."""


def _cpu_seconds(folder: Path | None, version: str) -> float:
    """CPU charged so far to a cgroup folder and everything under it (0.0 without one)."""
    if folder is None:
        return 0.0
    if version == "cgroup-v1":
        return int((folder / "cpuacct.usage").read_text()) / 1e9
    for line in (folder / "cpu.stat").read_text().splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    return 0.0


def _templates_cpu() -> float:
    """CPU seconds the live sandbox templates used themselves (the fork per run; not their
    runs, which their cgroups count): every process of each template's tree, own time only
    (``/proc/PID/schedstat``: nanoseconds, where ``stat`` counts whole ticks)."""
    total = 0.0
    for template in list(TEMPLATES._templates.values()):
        stack = [template.process.pid]
        while stack:
            pid = stack.pop()
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
                for task in os.listdir(f"/proc/{pid}/task"):
                    children = Path(f"/proc/{pid}/task/{task}/children").read_text()
                    stack += [int(child) for child in children.split()]
    return total


PATHS = ("zygote", "bwrap", "warm")
"""How a judge's run starts: forked from a template, bubblewrap per check, bubblewrap ahead."""


def path_sandbox(path: str, **kwargs: object) -> Sandbox:
    """A sandbox whose judge runs start the ``path`` way."""
    return Sandbox(backend="bwrap", warm=path == "warm", zygote=path == "zygote", **kwargs)  # type: ignore[arg-type]


def cpu_per_check(
    workspace: Path, checks: int, python: str | None, path: str
) -> tuple[float, float, float]:
    """(verifier, runs, template) CPU milliseconds per python check, over ``checks`` sequential
    ones, with judge runs started the ``path`` way.

    The runs' CPU is read from a parent cgroup of their own (as root; otherwise only the
    verifier's is known and the runs' is NaN); a template's own from ``/proc``. The joining
    ``/bin/sh`` before its join (a fork and an exec, well under a millisecond) is in none.
    """
    parent = f"/assay-bench-{os.getpid()}-{next(_PARENTS)}"
    sandbox = path_sandbox(path, cgroup_parent=parent, python=python)
    where = hierarchy(parent)
    folder = where.cpu if where is not None else None
    version = where.version if where is not None else ""
    context = CheckContext(workspace=workspace, sandbox=sandbox)
    check = build_check(CHECK)
    for _ in range(2):
        first = check.run(context)
        assert first.status is Status.VERIFIED, first.detail
    time.sleep(0.3)  # a run started ahead (warm) finishes starting
    mine, runs, template = time.process_time(), _cpu_seconds(folder, version), _templates_cpu()
    for _ in range(checks):
        outcome = check.run(context)
        assert outcome.status is Status.VERIFIED, outcome.detail
    time.sleep(0.3)  # the same number of runs started ahead as before
    mine, runs = time.process_time() - mine, _cpu_seconds(folder, version) - runs
    template = _templates_cpu() - template
    sandbox.close()
    if where is not None:
        for cgroup in {where.memory, where.pids, *([where.cpu] if where.cpu else [])}:
            with contextlib.suppress(OSError):
                cgroup.rmdir()
    per_run = (runs * 1000 / checks) if folder else float("nan")
    return mine * 1000 / checks, per_run, template * 1000 / checks


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--checks", type=int, default=200, help="checks in the throughput run")
    parser.add_argument(
        "--cpu-checks", type=int, help="checks per CPU measurement (default: 40, at most --checks)"
    )
    parser.add_argument(
        "--sandbox-python", help="also measure with this interpreter running the judge"
    )
    args = parser.parse_args(argv)
    cpu_checks = args.cpu_checks or min(40, args.checks)

    sandbox = Sandbox(backend="bwrap", zygote=False)
    sandboxes = {path: path_sandbox(path) for path in PATHS}
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "solution.py").write_text("def add(a, b):\n    return a + b\n")
        check = build_check(CHECK)
        contexts = {p: CheckContext(workspace=workspace, sandbox=s) for p, s in sandboxes.items()}

        def bare() -> object:
            return subprocess.run([PYTHON, "-I", "-S", "-c", "pass"], check=True)

        def isolated() -> object:
            result = sandbox.run([PYTHON, "-I", "-S", "-c", "pass"], untrusted=True)
            assert result.exit_code == 0, result.output
            return result

        no_cgroup = Sandbox(backend="bwrap", cgroups=False)

        # Without a cgroup the process budget is RLIMIT_NPROC, which counts every process of
        # the sandbox uid on the machine (other sandboxes too): a budget that cannot bind here.
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        many = Limits(processes=hard if 0 < hard < 100_000 else 100_000)

        def without_cgroup() -> object:
            result = no_cgroup.run([PYTHON, "-I", "-S", "-c", "pass"], limits=many)
            assert result.exit_code == 0, result.output
            return result

        def allow_all_filter() -> object:
            with mock.patch.object(sandbox_module, "seccomp_program", return_value=ALLOW_ALL):
                return isolated()

        pure = build_check(PURE)

        def checking(path: str, what: Check) -> Callable[[], object]:
            def run() -> object:
                outcome = what.run(contexts[path])
                assert outcome.status is Status.VERIFIED, outcome.detail
                return outcome

            return run

        kinds = {
            "bare": bare,
            "sandboxed": isolated,
            "no_cgroup": without_cgroup,
            "allow_all": allow_all_filter,
            **{f"check {path}": checking(path, check) for path in PATHS},
            **{f"pure {path}": checking(path, pure) for path in PATHS},
        }
        timings: dict[str, list[float]] = {name: [] for name in kinds}
        for fn in kinds.values():
            fn()  # warm the page cache
        for _ in range(args.runs):
            for name, fn in kinds.items():
                timings[name].append(_timed(fn))
        medians = {name: statistics.median(values) * 1000 for name, values in timings.items()}

        workers = os.cpu_count() or 1
        rates = {path: _rate(check, contexts[path], args.checks, workers) for path in PATHS}
        sandboxes["warm"].close()

        pythons = [None, *([args.sandbox_python] if args.sandbox_python else [])]
        cpu = {
            (python, path): cpu_per_check(workspace, cpu_checks, python, path)
            for python in pythons
            for path in PATHS
        }
        other = None
        if args.sandbox_python:
            other = Sandbox(backend="bwrap", python=args.sandbox_python)
            other_context = CheckContext(workspace=workspace, sandbox=other)
            for _ in range(2):
                check.run(other_context)
            other_rate = _rate(check, other_context, args.checks, workers)

    overhead = medians["sandboxed"] - medians["bare"]
    print(f"bare python spawn          {medians['bare']:7.1f} ms (median of {args.runs})")
    print(
        f"same spawn through bwrap   {medians['sandboxed']:7.1f} ms   overhead {overhead:+.1f} ms "
        f"({medians['sandboxed'] / medians['bare']:.2f}x the bare spawn; target <= 25 ms)"
    )
    print(
        f"  of which the run's cgroup {medians['sandboxed'] - medians['no_cgroup']:+7.1f} ms   "
        f"(memory: {sandbox.memory_limit}; without it: {no_cgroup.memory_limit})"
    )
    print(
        f"  of which seccomp rules    {medians['sandboxed'] - medians['allow_all']:+7.1f} ms   "
        "(against an allow-everything filter)"
    )
    check, pure = medians["check zygote"], medians["pure zygote"]
    print(
        f"python check end to end    {check:7.1f} ms   (stage workspace, sandbox, judge, candidate "
        "process, one call across, verdict; forked from a template; target < 58 ms)"
    )
    print(
        f"  of which the proxy        {check - pure:+7.1f} ms   "
        f"(against a check that imports nothing from the workspace: {pure:.1f} ms)"
    )
    for path, words in (("bwrap", "bubblewrap per check"), ("warm", "started ahead: warm")):
        print(
            f"  {path:<25} {medians[f'check {path}']:7.1f} ms   ({words}; "
            f"{medians[f'check {path}'] / check:.2f}x the template's)"
        )
    print(
        f"throughput, {workers} workers        {rates['zygote']:7.1f} python checks/s "
        f"(bubblewrap per check: {rates['bwrap']:.1f}/s, warm: {rates['warm']:.1f}/s; "
        "target >= 50/s on 2 cores)"
    )
    for (python, path), (mine, runs, template) in cpu.items():
        name = f"sandbox_python {python}" if python else "this interpreter"
        total = mine + runs + template
        print(
            f"cpu per python check       {total:7.1f} ms   (verifier {mine:.1f} + runs {runs:.1f} "
            f"+ template {template:.1f}; {path}, {name}, {cpu_checks} in a row): "
            f"at most {workers * 1000 / total:.1f} checks/s on {workers} cores"
        )
    for python in pythons:
        zygote, bwrap = (sum(cpu[(python, path)]) for path in ("zygote", "bwrap"))
        print(
            f"cpu ratio, template / bubblewrap per check: {zygote / bwrap:.2f} "
            f"({zygote:.1f} / {bwrap:.1f} ms, {python or 'this interpreter'}, same run)"
        )
    if other is not None:
        print(
            f"throughput, {workers} workers        {other_rate:7.1f} python checks/s "
            f"(sandbox_python {other.python.path}, Python {other.python.version})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
