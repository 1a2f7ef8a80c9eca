"""The whole flow in a real browser: Debian's Chromium, driven by Playwright, against real
uvicorn on loopback serving the service's app. A screenshot of every page goes into the test's
folder and is checked not to be blank."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.service.conftest import uvicorn_serving
from tests.web.browser import TIMEOUT_MS, browser, shot
from tests.web.conftest import ESSAY, SAT, Site, make_site

__all__ = ["browser"]  # the fixture, imported for the tests below

pytestmark = pytest.mark.slow

SEALED = (SAT / "sealed" / "held-out.cnf").read_text()
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Site, str]]:
    site = make_site(tmp_path)
    try:
        with uvicorn_serving(site.app) as base:
            yield site, base
    finally:
        site.app.state.web.close()


def as_user(browser: Any, base: str, site: Site, user: str, **options: Any) -> Any:
    """A fresh browser context (its own cookies) logged in as ``user``; its page."""
    context = browser.new_context(base_url=base, **options)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto("/login")
    page.get_by_label("Token").focus()  # by keyboard: type the token, Enter submits
    page.keyboard.type(site.tokens[user])
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/problems$"))
    return page


def fits(page: Any) -> bool:
    """Nothing wider than the viewport (readable on a phone without scrolling sideways)."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


def test_a_participant_submits_sees_the_verdict_and_is_refused_a_sealed_reference(
    browser: Any, served: tuple[Site, str], tmp_path: Path
) -> None:
    site, base = served
    page = as_user(browser, base, site, "alice", viewport=PHONE)
    shot(page, tmp_path, "problems")
    page.get_by_role("link", name=re.compile("Satisfy a small formula")).click()
    page.wait_for_url(re.compile("/problems/sat-small$"))
    stages = page.locator("ol.stages > li h3").all_inner_texts()
    assert [s.split()[0] for s in stages] == ["public", "held-out"]
    assert page.get_by_text("Sealed until 2030-01-01T00:00:00Z").is_visible()
    assert "5 of 5" in page.locator("#allowance").inner_text()
    assert fits(page)
    shot(page, tmp_path, "problem")
    good = SAT / "submissions" / "good" / "assignment.txt"
    page.get_by_label("assignment (required)").set_input_files(str(good))
    page.get_by_label("Summary").focus()
    page.keyboard.press("Tab")  # the next stop after the summary is the submit button
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile("/submissions/s-"))
    assert page.locator("#verdict").inner_text() == "Verified"
    assert "public" in page.locator(".run").first.inner_text()
    assert fits(page)
    shot(page, tmp_path, "submission")
    answer = page.goto("/problems/sat-small/references/held-out")  # a sealed reference's URL
    assert answer is not None and answer.status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    assert SEALED[:40] not in page.content()
    shot(page, tmp_path, "sealed-refused")


def respond(page: Any, verdict: str, rationale: str = "Read it; see the rationale.") -> None:
    page.get_by_label(verdict, exact=True).check()
    page.get_by_label("rationale (required)").fill(rationale)
    page.locator('input[name="field.citations"]').first.check()
    page.locator('input[name="field.confidence"]').fill("0.8")
    page.get_by_role("button", name="Record my response").click()


def claim_first(page: Any) -> None:
    page.goto("/review")
    page.get_by_role("button", name=re.compile("^Claim seat")).first.click()
    page.wait_for_url(re.compile(r"/review/seat\?id="))


def test_three_reviewers_split_and_the_expert_reads_their_reports(
    browser: Any, served: tuple[Site, str], tmp_path: Path
) -> None:
    site, base = served
    alice = as_user(browser, base, site, "alice")
    alice.goto("/problems/reviewed-essay")
    split = ESSAY / "submissions" / "good-split"
    alice.get_by_label("essay (required)").set_input_files(str(split / "essay.md"))
    alice.get_by_label("Summary").fill((split / "summary.txt").read_text().strip())
    alice.get_by_role("button", name="Submit for verification").click()
    alice.wait_for_url(re.compile("/submissions/s-"))
    assert alice.locator("#verdict").inner_text() == "Pending"
    assert "awaiting reviewers" in alice.locator(".run").first.inner_text()
    assert alice.get_by_text("refreshes itself").is_visible()
    shot(alice, tmp_path, "submission-pending")

    for user, verdict in (("rev1", "pass"), ("rev2", "fail"), ("rev3", "uncertain")):
        page = as_user(browser, base, site, user)
        if user == "rev1":
            page.goto("/review")
            shot(page, tmp_path, "review")
        claim_first(page)
        assert page.get_by_text("assay://submission/").first.is_visible()
        if user == "rev1":  # an empty rationale: refused, the reason beside the field
            respond(page, verdict, rationale="")
            error = page.locator("#err-rationale")
            expect(error).to_contain_text("rationale")
            shot(page, tmp_path, "seat-invalid")
        respond(page, verdict)
        expect(page.get_by_role("heading", name="Your response is recorded")).to_be_visible()
        page.context.close()

    erin = as_user(browser, base, site, "erin")
    claim_first(erin)
    reports = erin.locator("ul.materials > li").filter(has_text="the report of 'panel'")
    assert reports.count() == 3
    text = reports.all_inner_texts()
    assert any('"verdict": "fail"' in t or '"verdict":"fail"' in t for t in text), text
    shot(erin, tmp_path, "seat-expert")
    respond(erin, "pass")
    expect(erin.get_by_role("heading", name="Your response is recorded")).to_be_visible()

    # alice's page refreshes itself while the run is pending: the verdict appears
    expect(alice.locator("#verdict")).to_have_text("Verified", timeout=TIMEOUT_MS)
    shot(alice, tmp_path, "submission-reviewed")


def test_a_manager_revokes_a_checker_and_the_run_shows_it(
    browser: Any, served: tuple[Site, str], tmp_path: Path
) -> None:
    site, base = served
    good = (SAT / "submissions" / "good" / "assignment.txt").read_bytes()
    made = httpx.post(
        f"{base}/v1/problems/sat-small/submissions",
        headers=site.auth("alice"),
        files={"assignment": ("a.txt", good)},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    sid = made.json()["submission"]
    page = as_user(browser, base, site, "mgr")
    page.goto("/manage")
    checker = page.locator("article.checker").filter(has_text="assay:sat_assignment@")
    assert checker.count() == 1
    shot(page, tmp_path, "manage")
    checker.get_by_label(re.compile("Why revoke")).fill("the checker accepted a wrong model")
    checker.get_by_role("button", name="Revoke this checker").click()
    page.wait_for_url(re.compile("/manage$"))
    assert (
        "Revoked: the checker accepted a wrong model"
        in page.locator("article.checker").filter(has_text="assay:sat_assignment@").inner_text()
    )
    page.goto(f"/submissions/{sid}")
    note = page.locator(".revoked-note").first
    assert "the checker accepted a wrong model" in note.inner_text()
    shot(page, tmp_path, "submission-revoked")
    alice = as_user(browser, base, site, "alice")
    alice.goto(f"/submissions/{sid}")
    assert alice.locator(".run.revoked").count() == 1
