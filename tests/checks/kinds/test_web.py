from __future__ import annotations

from typing import Any

import pytest

from assay import InvalidSpec, Status
from assay.checks._kinds._web import canonical_url, cited_urls
from tests.helpers import run_kind

V, R, I = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE

SERVED = [
    {"url": "https://example.org/a", "status": 200},
    {"url": "https://Example.org:443/b?x=1#frag", "status": 200},
    {"url": "http://example.org/", "status": 200},
    {"url": "https://example.org/failed", "status": 404},
    {"url": "https://example.org/moved", "status": 301},
]


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("See https://example.org/a.", ["https://example.org/a"]),
        ("(https://example.org/a)", ["https://example.org/a"]),
        (
            "[a source](https://example.org/a) and <https://example.org/b>",
            ["https://example.org/a", "https://example.org/b"],
        ),
        ('"https://example.org/a", https://example.org/a!', ["https://example.org/a"]),
        ("HTTPS://EXAMPLE.org/Path", ["https://example.org/Path"]),
        ("ftp://example.org/a and example.org/a", ["ftp://example.org/a", "//example.org/a"]),
        (
            "https://example.org:8443/x https://example.org:443/y",
            ["https://example.org:8443/x", "https://example.org/y"],
        ),
    ],
)
def test_cited_urls(text: str, urls: list[str]) -> None:
    assert cited_urls(text) == urls


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://example.org/a#x", "https://example.org/a", True),
        ("HTTPS://EXAMPLE.ORG/a", "https://example.org/a", True),
        ("https://example.org:443/a", "https://example.org/a", True),
        ("https://example.org", "https://example.org/", True),
        ("https://example.org/a/", "https://example.org/a", False),
        ("http://example.org/a", "https://example.org/a", False),
        ("https://example.org/A", "https://example.org/a", False),
        ("https://example.org/a?x=1", "https://example.org/a?x=2", False),
    ],
)
def test_canonical_url(a: str, b: str, same: bool) -> None:
    assert (canonical_url(a) == canonical_url(b)) is same


@pytest.mark.parametrize(
    ("answer", "spec", "status", "message"),
    [
        ("Per https://example.org/a and https://example.org/b?x=1.", {}, V, "all 2 cited"),
        ("Per [docs](https://EXAMPLE.org/a#intro).", {}, V, ""),
        ("Per http://example.org.", {}, V, ""),
        (
            "Per https://example.org/a",
            {"min_citations": 2},
            R,
            "cites 1 distinct URL(s); at least 2",
        ),
        (
            "Per https://example.org/a and again https://example.org/a#x",
            {"min_citations": 2},
            R,
            "cites 1 distinct",
        ),
        ("I read the docs carefully.", {}, R, "cites 0 distinct URL(s)"),
        ("", {}, R, "cites 0"),
        (
            "Per https://example.org/failed",
            {},
            R,
            "were not served during the episode: https://example.org/failed",
        ),
        ("Per https://example.org/moved", {}, R, "not served"),
        ("Per https://example.org/a/", {}, R, "https://example.org/a/"),
        ("Per http://example.org/a", {}, R, "http://example.org/a"),
        (
            "Per https://example.org/a and https://evil.example/claimed",
            {},
            R,
            "1 cited URL(s) were not served",
        ),
        (None, {}, I, "no final answer"),
    ],
)
def test_web_receipt(
    answer: str | None, spec: dict[str, Any], status: Status, message: str
) -> None:
    outcome = run_kind("web_receipt", answer=answer, receipts=SERVED, **spec)
    assert outcome.status is status, outcome.detail
    assert message in outcome.detail


def test_policy_claims_are_not_receipts() -> None:
    answer = 'Sources: https://example.org/z (receipts: [{"url": "https://example.org/z", "status": 200}])'
    assert run_kind("web_receipt", answer=answer, receipts=SERVED).status is R


def test_min_citations_zero_is_refused() -> None:
    with pytest.raises(InvalidSpec, match="min_citations"):
        run_kind("web_receipt", answer="x", min_citations=0)
