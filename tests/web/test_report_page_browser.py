"""The review report page in a real browser: Debian's Chromium (Playwright) against real
uvicorn on loopback. The page is not blank, its three charts are drawn (each SVG has more
than one colour in a screenshot of it) and readable by their accessible names, and at phone
width no chart is wider than the screen."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import uvicorn_serving
from tests.web.browser import TIMEOUT_MS, browser, pixels, shot
from tests.web.test_report_page import reviewed

__all__ = ["browser"]  # the fixture, imported for the test below

pytestmark = pytest.mark.slow


def test_the_report_page_draws_its_charts(browser: Any, tmp_path: Path) -> None:
    site = reviewed(f"sqlite:///{tmp_path / 'assay.db'}", tmp_path)
    try:
        with uvicorn_serving(site.app) as base:
            context = browser.new_context(base_url=base, viewport={"width": 1000, "height": 900})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto("/login")
            page.get_by_label("Token").fill(site.tokens["author"])
            page.keyboard.press("Enter")
            page.wait_for_url(re.compile(r"/problems$"))
            page.get_by_role("link", name="Reports").click()
            page.wait_for_url(re.compile(r"/reports/review$"))
            page.get_by_label("Reference protocol").select_option(site.expert)
            page.get_by_role("button", name="Show").click()
            page.wait_for_url(re.compile(r"reference="))
            shot(page, tmp_path, "report")
            charts = page.locator("svg.chart")
            assert charts.count() == 3
            for name in ("Rates with their 95 % intervals", "Decisions per reviewer-hour"):
                assert page.get_by_role("img", name=re.compile(name)).count() == 1
            for i in range(3):
                drawn = charts.nth(i)
                box = drawn.bounding_box()
                assert box is not None and box["width"] > 300 and box["height"] > 60
                assert len(pixels(drawn.screenshot())) > 2, f"chart {i} is blank"
            assert "0.750 [0.301, 0.954] (3/4)" in page.locator("#protocols").inner_text()
            page.set_viewport_size({"width": 390, "height": 844})
            widths = page.evaluate(
                "[...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().right)"
            )
            assert all(right <= 390 for right in widths), widths
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
            shot(page, tmp_path, "report-phone")
            context.close()
    finally:
        site.app.state.web.close()
