"""Anything that names a host is a citation (issue 7, item 9).

An unserved source written without ``http(s)://`` (``www.host/x``, ``//host/x``, ``host.org/x``,
a markdown link to one, fullwidth ``ｈｔｔｐｓ://``, another scheme, an invisible character in the
host) used to pass beside one served URL. Each must now refute, naming the unserved source.
"""

from __future__ import annotations

import pytest

from assay import Status
from assay.checks._kinds._web import cited_urls
from tests.helpers import run_kind

SERVED = [{"url": "https://example.org/a", "status": 200}]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("Per https://example.org/a and www.evil.example/report.", "//www.evil.example/report"),
        ("Per https://example.org/a and [report](www.evil.example/x).", "//www.evil.example/x"),
        ("Per https://example.org/a and //evil.example/x", "//evil.example/x"),
        ("Per https://example.org/a and ｈｔｔｐｓ://evil.example/x", "https://evil.example/x"),
        (
            "Per https://example.org/a and ｈｔｔｐｓ：／／evil．example／x",
            "https://evil.example/x",
        ),
        ("Per https://example.org/a and evil.example/x", "//evil.example/x"),
        ("Per https://example.org/a and evil.com", "//evil.com/"),
        ("Per https://example.org/a and WWW.EVIL.EXAMPLE", "//www.evil.example/"),
        ("Per https://example.org/a and evil.example:8080", "//evil.example:8080/"),
        ("Per https://example.org/a and 203.0.113.9/x", "//203.0.113.9/x"),
        ("Per https://example.org/a and ftp://evil.example/x", "ftp://evil.example/x"),
        ("Per https://example.org/a and https//evil.example/x", "//evil.example/x"),
        ("Per https://example.org/a and evil\u200b.example/x", "//evil.example/x"),
        ("Per https://example.org/a and <www.evil.example/x>", "//www.evil.example/x"),
        ("Per https://example.org/a and example.org/b", "//example.org/b"),
        ("Per https://example.org/a and www.example.org/a", "//www.example.org/a"),
        ("Per https://example.org/a and пример.рф/x", "//пример.рф/x"),
    ],
)
def test_an_unserved_citation_in_any_form_refutes(answer: str, named: str) -> None:
    outcome = run_kind("web_receipt", answer=answer, receipts=SERVED)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)
    assert named in outcome.detail


@pytest.mark.parametrize(
    "answer",
    [
        "Per example.org/a.",
        "Per example.org/a, see https://example.org/a",
        "Per //example.org/a",
        "Per [the page](example.org/a)",
        "Per ｈｔｔｐｓ://example.org/a",
        "Per https://example.org/a (e.g. Node.js, file.txt, 3.14, U.S. law, me@example.org).",
    ],
)
def test_a_served_source_in_any_form_passes(answer: str) -> None:
    outcome = run_kind("web_receipt", answer=answer, receipts=SERVED)
    assert outcome.status is Status.VERIFIED, (answer, outcome.detail)


def test_one_source_written_two_ways_is_one_citation() -> None:
    assert cited_urls("https://example.org/a and example.org/a") == ["https://example.org/a"]
    outcome = run_kind(
        "web_receipt",
        answer="https://example.org/a and example.org/a",
        receipts=SERVED,
        min_citations=2,
    )
    assert outcome.status is Status.REFUTED
