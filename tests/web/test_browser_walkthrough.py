"""The whole flow a new user walks, in Debian's Chromium, against the real ``assay serve``
process (not an app in a thread): users made with ``assay user add`` (the token it prints),
the URL ``assay serve`` prints opened as printed, then

manager publishes a problem from an archive upload → participant submits → reviewer claims a
seat and responds → manager records the external stage's evidence (first a refusal beside the
field) → participant sees the verdict → manager revokes a checker → participant sees the run
marked revoked.

Every page's screenshot goes into the test's folder and is checked not to be blank."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from typer.testing import CliRunner

from assay.cli import app as cli
from tests.service.test_serve_cli import serve
from tests.web.archives import tar_gz_of
from tests.web.browser import TIMEOUT_MS, browser, shot

__all__ = ["browser"]  # the fixture, imported for the test below

pytestmark = pytest.mark.slow

PROTOCOL = {
    "schema": "assay.protocol/1",
    "title": "One reviewer decides",
    "nodes": {
        "panel": {
            "type": "review",
            "seats": 1,
            "eligible": {"group": "reviewers"},
            "rubric": "Does the answer explain why it is 42? Pass or fail it, with a rationale.",
            "response_schema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["verdict", "rationale"],
                "properties": {
                    "verdict": {"enum": ["pass", "fail", "uncertain"]},
                    "rationale": {"type": "string", "minLength": 1},
                },
            },
        },
        "vote": {"type": "reduce", "op": "m_of_n", "inputs": ["panel"], "m": 1, "final": True},
    },
}
PROBLEM = {
    "id": "walk",
    "title": "Walk the whole flow",
    "statement": "statement.md",
    "contract": {
        "roles": [{"name": "answer", "required": True, "max_bytes": 4096}],
        "acceptance": "The answer says 42, a reviewer passes it, and the benchmark meets the rule.",
        "stages": [
            {
                "name": "form",
                "type": "sandbox",
                "establishes": "The answer mentions 42.",
                "checks": [{"kind": "file_contains", "path": "answer", "pattern": "42"}],
            },
            {"name": "review", "type": "review", "protocol": "review/one.json"},
            {
                "name": "benchmark",
                "type": "external",
                "mechanism": "rule",
                "supplied_by": ["mgr"],
                "establishes": "The benchmark report shows a score of at least 0.9.",
                "evidence_schema": {
                    "type": "object",
                    "required": ["score"],
                    "properties": {"score": {"type": "number", "minimum": 0.9}},
                },
            },
        ],
    },
}


def problem_folder(root: Path) -> Path:
    folder = root / "walk"
    (folder / "review").mkdir(parents=True)
    (folder / "problem.yaml").write_text(json.dumps(PROBLEM, indent=1))
    (folder / "statement.md").write_text("# Walk\n\nAnswer with 42 and say why.\n")
    (folder / "review" / "one.json").write_text(json.dumps(PROTOCOL, indent=1))
    return folder


def user_add(db: str, name: str, *options: str) -> str:
    """``assay user add NAME ... --json``, as the README says; the token it prints once."""
    result = CliRunner().invoke(
        cli, ["user", "add", name, *options, "--json"], env={"ASSAY_DB": db}
    )
    assert result.exit_code == 0, result.output
    return str(json.loads(result.output)["token"])


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], str]]:
    """``assay serve`` in its own process over a fresh store: (the URL it printed, tokens,
    the store's URL)."""
    db = f"sqlite:///{tmp_path / 'assay.db'}"
    tokens = {
        "mgr": user_add(db, "mgr", "--role", "manager"),
        "alice": user_add(db, "alice", "--role", "participant"),
        "rev1": user_add(db, "rev1", "--role", "reviewer", "--group", "reviewers"),
    }
    env = {**os.environ, "ASSAY_DB": db, "PYTHONUNBUFFERED": "1"}
    with serve(cwd=tmp_path, env=env) as (served_at, process):
        assert process.stdout is not None
        banner = process.stdout.readline()  # printed before uvicorn starts
        found = re.search(r"serving on (http://\S+)", banner)
        assert found and found.group(1) == served_at, banner
        yield found.group(1), tokens, db


def sign_in(browser: Any, url: str, token: str) -> Any:
    """A fresh browser (its own cookies) that opens the printed URL and pastes the token."""
    page = browser.new_context(base_url=url).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.wait_for_url(re.compile(r"/login\?next="))
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/problems$"))
    return page


def test_a_new_user_walks_the_whole_flow_from_assay_serve(
    browser: Any, serving: tuple[str, dict[str, str], str], tmp_path: Path
) -> None:
    url, tokens, _ = serving
    archive = tmp_path / "walk.tar.gz"
    archive.write_bytes(tar_gz_of(problem_folder(tmp_path / "author")))

    # the manager publishes the problem from the archive
    mgr = sign_in(browser, url, tokens["mgr"])
    shot(mgr, tmp_path, "01-problems-empty")
    mgr.get_by_role("link", name="Manage").click()
    mgr.get_by_label(re.compile("Problem folder archive")).set_input_files(str(archive))
    mgr.get_by_role("button", name="Publish").click()
    expect(mgr.locator("#published")).to_contain_text("Published walk")
    shot(mgr, tmp_path, "02-published")

    # the participant reads the process, submits and waits for the reviewer
    alice = sign_in(browser, url, tokens["alice"])
    alice.get_by_role("link", name=re.compile("Walk the whole flow")).click()
    stages = alice.locator("ol.stages > li h3").all_inner_texts()
    assert [s.split()[0] for s in stages] == ["form", "review", "benchmark"]
    shot(alice, tmp_path, "03-problem")
    answer = tmp_path / "answer.txt"
    answer.write_text("42, because six times seven is 42.\n")
    alice.get_by_label("answer (required)").set_input_files(str(answer))
    alice.get_by_role("button", name="Submit for verification").click()
    alice.wait_for_url(re.compile("/submissions/s-"))
    submission = alice.url.rsplit("/", 1)[1]
    assert alice.locator("#verdict").inner_text() == "Pending"
    assert "awaiting reviewers" in alice.locator(".run").first.inner_text()
    shot(alice, tmp_path, "04-submission-pending")

    # the reviewer claims the seat and responds
    rev1 = sign_in(browser, url, tokens["rev1"])
    rev1.get_by_role("link", name="Review").click()
    rev1.get_by_role("button", name=re.compile("^Claim seat")).first.click()
    rev1.wait_for_url(re.compile(r"/review/seat\?id="))
    shot(rev1, tmp_path, "05-seat")
    rev1.get_by_label("pass", exact=True).check()
    rev1.get_by_label("rationale (required)").fill("It says why: six times seven.")
    rev1.get_by_role("button", name="Record my response").click()
    expect(rev1.get_by_role("heading", name="Your response is recorded")).to_be_visible()

    # the run now waits at the external stage; the manager records the evidence
    mgr.goto(f"/submissions/{submission}")
    expect(mgr.locator(".run").first).to_contain_text("benchmark")
    mgr.get_by_role("link", name=re.compile("Record this stage")).click()
    mgr.wait_for_url(re.compile("/external/benchmark$"))
    mgr.get_by_label(re.compile("Evidence")).fill('{"score": NaN}')
    mgr.get_by_role("button", name="Record").click()
    expect(mgr.locator("#err-evidence")).to_contain_text("not strict JSON")
    shot(mgr, tmp_path, "06-evidence-refused")
    mgr.get_by_label(re.compile("Evidence")).fill('{"score": 0.97}')
    mgr.get_by_role("button", name="Record").click()
    mgr.wait_for_url(re.compile(f"/submissions/{submission}$"))
    expect(mgr.locator("#verdict")).to_have_text("Verified")

    # the participant's open page refreshes itself to the verdict
    expect(alice.locator("#verdict")).to_have_text("Verified", timeout=TIMEOUT_MS)
    shot(alice, tmp_path, "07-submission-verified")

    # the manager revokes the form stage's checker; the participant sees the run marked
    mgr.goto("/manage")
    checker = mgr.locator("article.checker").filter(has_text="file_contains")
    checker.get_by_label(re.compile("Why revoke")).fill("it accepted any file with 42 in it")
    checker.get_by_role("button", name="Revoke this checker").click()
    mgr.wait_for_url(re.compile("/manage$"))
    shot(mgr, tmp_path, "08-revoked")
    alice.goto(f"/submissions/{submission}")
    assert "it accepted any file with 42 in it" in alice.locator(".revoked-note").first.inner_text()
    shot(alice, tmp_path, "09-submission-revoked")
