"""A response cites what its seat never showed: another submission's file, a sealed reference,
a fellow panelist's report before the panel settled, a look-alike URI. Refused: citations must
name the materials listed (with their hashes) when the seat was claimed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from tests.platform.conftest import Clock
from tests.review.helpers import answer, escalation, publish, seats_of, sqlite_platform, users

REFERENCES = [
    {"key": "labels", "path": "labels.txt", "sealed_until": "2031-01-01T00:00:00Z"},
    {"key": "open", "path": "open.txt"},
]


@pytest.mark.parametrize(
    "forge",
    [
        lambda uri, other: other,  # another submission's summary
        lambda uri, other: uri.replace("/summary", "/artifact/essay"),  # never submitted
        lambda uri, other: uri.upper(),
        lambda uri, other: uri + "/",
        lambda uri, other: uri.replace("assay://", "assay:///"),
        lambda uri, other: uri.replace("/reference/open", "/reference/labels"),  # sealed
        lambda uri, other: uri.rsplit("/", 4)[0] + "/review/r-x/panel/2",  # a fellow report
    ],
    ids=["other-submission", "unsent-role", "case", "slash", "triple-slash", "sealed", "report"],
)
def test_a_citation_of_anything_not_shown_is_refused(tmp_path: Path, forge: object) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        protocol = escalation()
        protocol["nodes"]["panel"]["shows"] = {"references": True}
        files = {"labels.txt": "secret", "open.txt": "public"}
        publish(platform, tmp_path, protocol, files=files, references=REFERENCES)
        users(platform)
        first = platform.submit("reviewed", {}, "42", "alice").submission
        other = platform.submit("reviewed", {}, "42", "bob").submission
        seat = next(s for s in seats_of(platform, "rev1") if s.startswith(first))
        claimed = platform.reviews.claim(seat, "rev1")
        shown = {m.uri.rsplit("/", 1)[-1] for m in claimed.materials}
        assert "open" in shown and "labels" not in shown  # sealed: not shown to reviewers
        opened = next(m.uri for m in claimed.materials if m.uri.endswith("/reference/open"))
        uri = next(m.uri for m in claimed.materials if m.uri.endswith("/summary"))
        forged = forge(uri, f"assay://submission/{other}/summary")  # type: ignore[operator]
        if forged == uri:  # the form that rewrites a reference's URI
            forged = forge(opened, "")  # type: ignore[operator]
        assert forged not in {m.uri for m in claimed.materials}
        with pytest.raises(InvalidInput, match="is not a material this seat showed"):
            platform.reviews.respond(seat, "rev1", answer("pass", forged))
        document = json.loads(answer("pass", uri))
        document["citations"] = [uri, forged]
        with pytest.raises(InvalidInput, match=r"citations\[1\]"):
            platform.reviews.respond(seat, "rev1", json.dumps(document).encode())
        platform.reviews.respond(seat, "rev1", answer("pass", uri))  # the seat stayed claimed
