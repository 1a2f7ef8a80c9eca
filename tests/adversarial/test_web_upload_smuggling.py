"""Multipart tricks against ``POST /v1/problems/ID/submissions`` (helper "adv-web"): a role
given twice, a role the contract does not name, path names as field or file names, a role sent
as text, the wrong content type, a file past the role's or the body's bound, and a summary
given twice. Each must be refused with nothing recorded, or (a file's name) be ignored: only
the bytes of the role's one file are judged."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.adversarial.web_attacks import BAD, GOOD, api, entries, newcomer, site
from tests.web.conftest import ESSAY, Site

__all__ = ["api", "site"]

URL = "/v1/problems/sat-small/submissions"

REFUSED: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "a role twice, the bad file first",
        {"files": [("assignment", ("a", BAD)), ("assignment", ("b", GOOD))]},
        422,
        "one file per role",
    ),
    (
        "a role twice, the good file first",
        {"files": [("assignment", ("a", GOOD)), ("assignment", ("b", BAD))]},
        422,
        "one file per role",
    ),
    (
        "a role the contract does not name",
        {"files": [("assignment", ("a", GOOD)), ("extra", ("x", b"zz"))]},
        422,
        "extra",
    ),
    ("a path as the role", {"files": [("../assignment", ("a", GOOD))]}, 422, "../assignment"),
    ("an absolute path as the role", {"files": [("/etc/passwd", ("a", GOOD))]}, 422, "/etc"),
    ("the role as a text field", {"data": {"assignment": GOOD.decode()}}, 422, "assignment"),
    (
        "the summary as a file",
        {"files": [("assignment", ("a", GOOD)), ("summary", ("s", b"x"))]},
        422,
        "summary",
    ),
    (
        "a url-encoded body",
        {
            "content": b"assignment=x",
            "headers": {"content-type": "application/x-www-form-urlencoded"},
        },
        422,
        "assignment",
    ),
    (
        "a JSON body",
        {"content": b'{"assignment": "x"}', "headers": {"content-type": "application/json"}},
        422,
        "assignment",
    ),
    (
        "a file past the role's max_bytes",
        {"files": [("assignment", ("a", GOOD + b"c" * 70_000))]},
        422,
        "assignment",
    ),
    (
        "a body past the server's bound",
        {"files": [("assignment", ("a", b"0" * (33 << 20)))]},
        413,
        "",
    ),
]


@pytest.mark.parametrize(
    ("how", "request_kw", "status", "named"), REFUSED, ids=[r[0] for r in REFUSED]
)
def test_a_smuggled_upload_is_refused_and_records_nothing(
    api: TestClient, site: Site, how: str, request_kw: dict[str, Any], status: int, named: str
) -> None:
    """Nothing is submitted (the platform may note the refusal, ``submission.refused``)."""
    before = entries(site, "submission.made")
    who = newcomer(site, "p-" + str(abs(hash(how)) % 10**8))
    headers = {**who, **request_kw.pop("headers", {})}
    answer = api.post(URL, headers=headers, **request_kw)
    assert answer.status_code == status, answer.text
    assert named in answer.json()["detail"]
    assert entries(site, "submission.made") == before


@pytest.mark.parametrize("filename", ["../../x", "/etc/passwd", "..\\..\\x", "a\x00b", ""])
def test_a_file_s_name_is_never_a_path(api: TestClient, site: Site, filename: str) -> None:
    """The file name is ignored: the run judged the role's bytes (bad bytes stay refuted)."""
    who = newcomer(site, "f-" + str(abs(hash(filename)) % 10**8))
    answer = api.post(URL, headers=who, files=[("assignment", (filename, BAD))])
    if filename == "":  # an empty name with content is still that role's file
        assert answer.status_code in (201, 422), answer.text
    else:
        assert answer.status_code == 201, answer.text
    if answer.status_code == 201:
        assert answer.json()["status"] == "refuted"


LONG_A = "FIRST thesis sentence that a filtering proxy saw and approved."
LONG_B = "SECOND thesis sentence smuggled in after the first one was read."


def test_a_summary_given_twice_is_refused(api: TestClient, site: Site) -> None:
    """A role given twice is a 422 ("one file per role"); a summary given twice must be too:
    otherwise what a reviewer reads and what a front proxy or log saw can differ."""
    essay = (ESSAY / "submissions" / "good" / "essay.md").read_bytes()
    before = entries(site, "submission.made")
    answer = api.post(
        "/v1/problems/reviewed-essay/submissions",
        headers=newcomer(site, "twice"),
        files=[("essay", ("e", essay))],
        data={"summary": [LONG_A, LONG_B]},
    )
    assert answer.status_code == 422, answer.text[:300]
    assert "summary" in answer.json()["detail"]
    assert entries(site, "submission.made") == before
