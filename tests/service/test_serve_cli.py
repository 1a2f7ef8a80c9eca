"""``assay serve``: real uvicorn in its own process on a free loopback port, printing its URL;
bad options are one line and exit 2; ``assay --help`` never imports FastAPI or uvicorn."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from assay.cli import app
from tests.service.conftest import free_port, item

ROOT = Path(__file__).resolve().parents[2]
ASSAY = [sys.executable, "-m", "assay"]


@contextmanager
def serve(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``assay serve`` on a free port, answering ``/healthz``: its URL and its process (whose
    stdout holds the banner it printed)."""
    port = free_port()
    process = subprocess.Popen(
        [*ASSAY, "serve", "--port", str(port), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "assay serve did not answer in time"
            time.sleep(0.1)
        yield url, process
    finally:
        process.terminate()
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


@pytest.mark.slow
def test_serve_answers_on_loopback_and_prints_its_url(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "out.txt").write_text("42")
    with serve("--workspace-root", str(tmp_path)) as (url, process):
        check = {"kind": "file_equals", "path": "out.txt", "value": "42"}
        items = [item("a"), {"id": "w", "checks": [check], "workspace": "ws"}]
        reply = httpx.post(f"{url}/v1/verify", json={"items": items}, timeout=30)
        assert [r["status"] for r in reply.json()["results"]] == ["verified", "verified"]
        assert httpx.get(f"{url}/docs", timeout=10).status_code == 200
        process.terminate()
        out, _ = process.communicate(timeout=20)
    assert out.splitlines()[0] == f"assay: serving on {url} (API docs at {url}/docs)"
    assert out.splitlines()[1].startswith(f"assay: pages for people at {url}/ (sign in")


@pytest.mark.slow
def test_serve_with_a_template_and_two_workers(tmp_path: Path) -> None:
    template = tmp_path / "t.json"
    template.write_text(
        json.dumps({"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]})
    )
    with serve("--workers", "2", "--template", str(template)) as (url, _):
        request = {
            "query": ["Q: 4", "Q: 5", "4"],
            "prompts": ["Q:", "Q:", "Q:"],
            "labels": ["4"] * 3,
        }
        for _ in range(4):  # whichever worker answers
            reply = httpx.post(f"{url}/get_reward", json=request, timeout=60)
            assert reply.json()["rewards"] == [1.0, 0.0, 0.0]
            assert reply.json()["extra_logs"]["masked"] == [0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "0"], "--port: must be a TCP port"),
        (["--port", "70000"], "--port: must be a TCP port"),
        (["--workers", "0"], "--workers: Input should be greater than or equal to 1"),
        (["--queue", "0"], "--queue: Input should be greater than or equal to 1"),
        (["--sandbox-jobs", "0"], "--sandbox-jobs: Input should be greater than or equal to 1"),
        (["--max-body-bytes", "10"], "--max-body-bytes: Input should be greater than or equal"),
        (["--workspace-root", "nope"], "--workspace-root: not a folder"),
        (["--template", "nope.json"], "nope.json: cannot read the template"),
        (["--host", "no.such.host.invalid"], "--host: cannot resolve"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("assay: error: "), result.stderr
    assert message in lines[0]
    assert result.stdout == ""


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--port", str(port)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"assay: error: --port: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


def test_the_cli_does_not_import_the_service_until_it_is_used() -> None:
    code = (
        "import sys; from assay.cli import app; "
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'assay.service') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr
