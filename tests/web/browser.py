"""Driving Debian's Chromium from Playwright (sync API) against real uvicorn on loopback, and
checking a screenshot is not blank. Playwright's own browser download cannot work here: the
browser is ``/usr/bin/chromium``, started with the flags that stop it reaching the network."""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",  # as root Chromium refuses to start without it (tests only, loopback only)
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
]
TIMEOUT_MS = 30_000


def chromium_or_skip() -> str:
    """Chromium's path; a visible skip without it, a failure when ./scripts/test demands tools."""
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if found is None:
        message = "Debian's chromium is not installed (./scripts/setup installs it)"
        if os.environ.get("ASSAY_REQUIRE_TOOLS") == "1":
            pytest.fail(f"ASSAY_REQUIRE_TOOLS=1: {message}")
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=FLAGS, timeout=TIMEOUT_MS
        )
        try:
            yield launched
        finally:
            launched.close()


def pixels(png: bytes) -> set[bytes]:
    """The distinct pixel values of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, data, header = 8, b"", b""
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data += body
        at += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    size = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(data), width * size
    previous, found = bytearray(stride), set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (
                    line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)
                ) & 255
        found.update(bytes(line[i : i + size]) for i in range(0, stride, size))
        previous = line
    return found


def shot(page: Any, folder: Path, name: str) -> Path:
    """A full-page screenshot into ``folder``, checked not to be blank: a blank page compresses
    to almost nothing, and the page's first heading, decoded, has more than one colour (text
    drawn on a background). Decoding only the heading keeps the pure-Python decoder fast."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert len(data) > 4000, f"{name}: a screenshot of {len(data)} bytes is blank"
    heading = page.locator("h1").first.screenshot()
    assert len(pixels(heading)) > 1, f"{name}: the page's heading is blank"
    return path
