"""The reward service's speed: what HTTP costs over judging in-process, in the same run.

    .venv/bin/python benchmarks/service.py            # 20,480 answer items, 300 latencies, 100 python checks
    .venv/bin/python benchmarks/service.py --quick    # a small run (the tests use it)

Starts ``assay serve`` (real uvicorn, loopback, a free port) in its own process and measures:

- answer-check items/s through ``POST /v1/verify`` in batches of 256 (an httpx client sending
  bodies it encoded once: see ``bodies``; it parses every reply and compares verdicts), against
  the same items judged in-process (``assay.episodes.judge_item``, what the service runs per
  item); targets: at least 10,000 items/s and at least 50 % of the in-process rate;
- the same items from two clients per worker at once (how a trainer with many rollout workers
  calls it: a client's encoding overlaps the service's judging), against ``assay serve`` with
  one worker and with ``--workers 2`` (both cores), beside the in-process rate in one process
  and in two (each judging half);
- single-item latency through ``/v1/verify`` (one answer item per request): p50 and p99, target
  p99 under 10 ms, beside ``GET /healthz`` round trips interleaved with them (the floor: HTTP on
  loopback with no judging, on the same machine at the same moment);
- sandboxed python checks/s through the API (one request of ``--checks`` items, the service's
  pool of one job per core) against the direct rate ``benchmarks/sandbox.py`` measures (a thread
  per core calling the check); target: the API costs under 10 %.

The machine is shared and noisy: trust the ratios (each pair is measured back to back) more than
the absolute figures. Exits 1 if the API and in-process verdicts ever differ.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import httpx

from assay import CheckContext, Config, Status, build_check
from assay.episodes import judge_item

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answers import numeric_corpus
from sandbox import CHECK

BATCH = 256


def answer_items(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` answer_number items (the numeric corpus of benchmarks/answers.py)."""
    corpus = numeric_corpus(n, random.Random(seed))
    return [
        {"id": f"a{i}", "checks": [spec], "answer": answer}
        for i, (answer, spec, _) in enumerate(corpus)
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def served(root: Path, timeout: float = 120.0, workers: int = 1) -> Iterator[str]:
    """``assay serve`` on a free loopback port, in its own process; its base URL."""
    port = _free_port()
    command = [sys.executable, "-m", "assay", "serve", "--port", str(port)]
    command += ["--workspace-root", str(root), "--workers", str(workers)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"assay serve exited: {server.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("assay serve did not answer /healthz in time")
            time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def in_process(items: Sequence[dict[str, Any]]) -> tuple[float, list[str]]:
    """The items judged in this process, as the service judges each (``from_json``: they are
    JSON values, as the service's parsed bodies are, so neither side re-checks that)."""
    config = Config()
    start = time.perf_counter()
    statuses = [
        judge_item(item, root=None, config=config, from_json=True).status.value for item in items
    ]
    return time.perf_counter() - start, statuses


JSON_BODY = {"content-type": "application/json"}


def bodies(items: Sequence[dict[str, Any]]) -> list[bytes]:
    """The requests' bodies, ``BATCH`` items each, encoded once: encoding is the client's own
    cost (a trainer pays it on its side, and here it would share the 2 cores with the service on
    every repeat); each request still carries all its items and the service reads and judges
    every one of them, every time."""
    return [
        json.dumps({"items": items[i : i + BATCH]}).encode() for i in range(0, len(items), BATCH)
    ]


def _post(client: httpx.Client, body: bytes) -> list[str]:
    """One request; the statuses of its results (the reply is parsed whole, as a client must)."""
    reply = client.post("/v1/verify", content=body, headers=JSON_BODY)
    reply.raise_for_status()
    return [r["status"] for r in reply.json()["results"]]


def through_api(client: httpx.Client, batches: Sequence[bytes]) -> tuple[float, list[str]]:
    statuses: list[str] = []
    start = time.perf_counter()
    for body in batches:
        statuses += _post(client, body)
    return time.perf_counter() - start, statuses


def _judge_share(items: Sequence[dict[str, Any]]) -> list[str]:
    return in_process(items)[1]


def in_processes(
    pool: ProcessPoolExecutor, items: Sequence[dict[str, Any]], shares: int
) -> tuple[float, list[str]]:
    """``items`` judged in-process by ``shares`` processes at once (each a contiguous share)."""
    size = -(-len(items) // shares)
    start = time.perf_counter()
    parts = list(pool.map(_judge_share, [items[i : i + size] for i in range(0, len(items), size)]))
    return time.perf_counter() - start, [status for part in parts for status in part]


def concurrently_through_api(
    clients: Sequence[httpx.Client], batches: Sequence[bytes]
) -> tuple[float, list[str]]:
    """``batches`` sent by ``len(clients)`` clients at once (batch ``i`` by client
    ``i % len(clients)``), as a trainer's rollout workers send them."""

    def send(which: int) -> list[tuple[int, list[str]]]:
        return [
            (number, _post(clients[which], batches[number]))
            for number in range(which, len(batches), len(clients))
        ]

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(clients)) as senders:
        sent = [part for done in senders.map(send, range(len(clients))) for part in done]
    elapsed = time.perf_counter() - start
    return elapsed, [status for _, part in sorted(sent) for status in part]


def at_once(batches: Sequence[bytes], workers: int, repeat: int) -> list[tuple[float, list[str]]]:
    """``repeat`` timed runs of ``items`` sent by two clients per worker at once to ``assay
    serve --workers workers`` (uvicorn's workers accept from one socket: with two connections
    per worker, the odds that they all land on one worker are small, and are the real odds)."""
    with tempfile.TemporaryDirectory() as folder, served(Path(folder), workers=workers) as url:
        clients = [httpx.Client(base_url=url, timeout=60) for _ in range(2 * workers)]
        try:
            concurrently_through_api(clients, batches[: workers * 4])  # warm every worker
            return [concurrently_through_api(clients, batches) for _ in range(repeat)]
        finally:
            for each in clients:
                each.close()


def latencies(
    client: httpx.Client, items: Sequence[dict[str, Any]]
) -> tuple[list[float], list[float]]:
    """Single-item ``/v1/verify`` round trips, and ``GET /healthz`` ones interleaved with them:
    the floor (HTTP on loopback, no judging) on the same machine at the same moment."""
    found, floor = [], []
    for item in items:
        start = time.perf_counter()
        reply = client.post("/v1/verify", json={"items": [item]})
        found.append(time.perf_counter() - start)
        assert reply.status_code == 200, reply.text
        start = time.perf_counter()
        client.get("/healthz")
        floor.append(time.perf_counter() - start)
    return found, floor


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def sandboxed_rates(client: httpx.Client, root: Path, checks: int) -> tuple[float, float]:
    """(direct python checks/s, through the API), measured back to back."""
    workspace = root / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "solution.py").write_text("def add(a, b):\n    return a + b\n")
    check = build_check(CHECK)
    context = CheckContext(workspace=workspace)
    workers = os.cpu_count() or 1
    check.run(context)  # warm the page cache
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda _: check.run(context), range(checks)))
    direct = checks / (time.perf_counter() - start)
    assert all(o.status is Status.VERIFIED for o in outcomes), outcomes[0].detail
    items = [{"id": f"p{i}", "checks": [CHECK], "workspace": "ws"} for i in range(checks)]
    start = time.perf_counter()
    reply = client.post("/v1/verify", json={"items": items}, timeout=600)
    api = checks / (time.perf_counter() - start)
    reply.raise_for_status()
    assert all(r["status"] == "verified" for r in reply.json()["results"]), reply.text[:500]
    return direct, api


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_480, help="answer items")
    parser.add_argument("--singles", type=int, default=300, help="single-item requests")
    parser.add_argument("--checks", type=int, default=100, help="sandboxed python checks")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (best counts)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a small run: 1,024 items, 50, 10")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.singles, args.checks, args.repeat = 1024, 50, 10, 1
    items = answer_items(args.n, args.seed)
    batches = bodies(items)
    with (
        tempfile.TemporaryDirectory() as folder,
        served(Path(folder)) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        through_api(client, batches[:1])  # warm both sides outside the timed runs
        in_process(items[:BATCH])
        api_times, local_times = [], []
        for _ in range(args.repeat):  # alternating, so noise hits both alike
            api_time, api_statuses = through_api(client, batches)
            local_time, local_statuses = in_process(items)
            api_times.append(api_time)
            local_times.append(local_time)
        api_rate, local_rate = args.n / min(api_times), args.n / min(local_times)
        single, floor = latencies(client, items[: args.singles])
        direct, api = sandboxed_rates(client, Path(folder), args.checks)
    cores = min(2, os.cpu_count() or 1)
    wide: dict[int, list[tuple[float, list[str]]]] = {}
    for workers in sorted({1, cores}):
        wide[workers] = at_once(batches, workers, args.repeat)
    with ProcessPoolExecutor(cores, mp_context=get_context("forkserver")) as pool:
        in_processes(pool, items[: BATCH * cores], cores)  # start and warm both
        wide_local = [in_processes(pool, items, cores) for _ in range(args.repeat)]
    wide_local_rate = args.n / min(t for t, _ in wide_local)
    runs = [(api_statuses, local_statuses)]
    runs += [(got, local_statuses) for found in wide.values() for _, got in found]
    runs += [(got, local_statuses) for _, got in wide_local]
    same = sum(
        a == b
        for got, want in runs
        if len(got) == len(want)
        for a, b in zip(got, want, strict=True)
    )
    compared = len(items) * len(runs)
    print(
        f"answer items through /v1/verify (batches of {BATCH}) {api_rate:>9,.0f} items/s   "
        f"in-process {local_rate:,.0f} items/s   ratio {api_rate / local_rate:.0%} "
        "(targets: >= 10,000 items/s, >= 50%)"
    )
    for workers, found in wide.items():
        rate = args.n / min(t for t, _ in found)
        local, where = (local_rate, "in one process")
        if workers > 1:
            local, where = (wide_local_rate, f"in {workers} processes")
        print(
            f"the same, {2 * cores} clients at once, --workers {workers} {rate:>9,.0f} items/s   "
            f"in-process {where} {local:,.0f} items/s   ratio {rate / local:.0%} "
            f"(target: >= 10,000 items/s on {cores} cores)"
        )
    print(
        f"single-item latency       p50 {_percentile(single, 0.5) * 1000:6.2f} ms   "
        f"p99 {_percentile(single, 0.99) * 1000:6.2f} ms   ({len(single)} requests; "
        "target p99 < 10 ms)"
    )
    print(
        f"  GET /healthz (the floor)  p50 {_percentile(floor, 0.5) * 1000:6.2f} ms   "
        f"p99 {_percentile(floor, 0.99) * 1000:6.2f} ms   (HTTP on loopback, no judging)"
    )
    print(
        f"sandboxed python checks/s through the API {api:6.1f}   direct {direct:6.1f}   "
        f"API cost {1 - api / direct:+.0%} (target < 10%)"
    )
    print(f"verdicts: same through the API and in-process on {same}/{compared}")
    return 0 if same == compared else 1


if __name__ == "__main__":
    sys.exit(main())
