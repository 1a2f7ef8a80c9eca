"""The pages over httpx (in-process): login sets an HTTP-only SameSite=Strict session cookie
that is not the token, every state-changing form needs the session's CSRF token, logout ends
the session, and a refused page leaks nothing."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from starlette.testclient import TestClient

from assay.platform import Platform
from tests.web.conftest import ESSAY, PRIVATE_SECRET, SAT, Site

GOOD = (SAT / "submissions" / "good" / "assignment.txt").read_bytes()
SEALED = (SAT / "sealed" / "held-out.cnf").read_bytes()


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]*)"', html)
    assert found, html
    return found.group(1)


def login(client: TestClient, site: Site, user: str) -> str:
    """Log ``user`` in; the page's CSRF token."""
    form = client.get("/login")
    answer = client.post(
        "/login",
        data={"csrf": csrf_of(form.text), "token": site.tokens[user], "next": "/problems"},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    return csrf_of(client.get("/problems").text)


def submissions(site: Site) -> int:
    with Platform.open(site.config) as platform:
        return len(platform.ledger.find(kind="submission.made"))


def test_pages_ask_for_a_login(api: TestClient) -> None:
    for path in ("/problems", "/problems/sat-small", "/review", "/manage", "/submissions/s-1"):
        answer = api.get(path, follow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login?next=")


def test_the_session_cookie_is_http_only_strict_and_not_the_token(
    api: TestClient, site: Site
) -> None:
    form = api.get("/login")
    answer = api.post(
        "/login",
        data={"csrf": csrf_of(form.text), "token": site.tokens["alice"], "next": "//evil.example"},
        follow_redirects=False,
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/problems"
    cookie = next(
        c for c in answer.headers.get_list("set-cookie") if c.startswith("assay_session=")
    )
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert site.tokens["alice"] not in cookie
    page = api.get("/problems")
    assert page.status_code == 200 and "Signed in as <strong>alice</strong>" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]


def test_login_needs_its_form_and_a_valid_token(api: TestClient, site: Site) -> None:
    api.get("/login")
    forged = api.post("/login", data={"csrf": "x", "token": site.tokens["alice"]})
    assert forged.status_code == 403 and "assay_session" not in api.cookies
    form = api.get("/login")
    wrong = api.post("/login", data={"csrf": csrf_of(form.text), "token": "not-a-token"})
    assert wrong.status_code == 401 and "not valid" in wrong.text
    assert "assay_session" not in api.cookies


def test_forms_without_the_session_s_csrf_token_change_nothing(api: TestClient, site: Site) -> None:
    csrf = login(api, site, "alice")
    for token in ("", "0" * 64, csrf[:-1] + ("0" if csrf[-1] != "0" else "1")):
        answer = api.post(
            "/problems/sat-small/submit",
            data={"csrf": token},
            files={"assignment": ("a.txt", GOOD)},
        )
        assert answer.status_code == 403
    assert submissions(site) == 0
    answer = api.post(
        "/problems/sat-small/submit", data={"csrf": csrf}, files={"assignment": ("a.txt", GOOD)}
    )
    assert answer.status_code == 200 and "Verified" in answer.text
    assert submissions(site) == 1


def test_a_csrf_token_of_another_session_is_refused(site: Site) -> None:
    with TestClient(site.app) as mallory, TestClient(site.app) as victim:
        theirs = login(mallory, site, "mgr")
        login(victim, site, "mgr")
        answer = victim.post(
            "/manage/revoke", data={"csrf": theirs, "checker": "assay:x@1", "why": "forged"}
        )
        assert answer.status_code == 403
    with Platform.open(site.config) as platform:
        assert not platform.ledger.find(kind="checker.revoked")


def test_logout_ends_the_session_everywhere(api: TestClient, site: Site) -> None:
    csrf = login(api, site, "alice")
    session = api.cookies["assay_session"]
    assert api.post("/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    with TestClient(site.app) as other:
        other.cookies.set("assay_session", session)
        answer = other.get("/problems", follow_redirects=False)
        assert answer.status_code == 303


def test_a_sealed_reference_page_is_refused_to_a_participant(api: TestClient, site: Site) -> None:
    login(api, site, "alice")
    page = api.get("/problems/sat-small")
    assert "Sealed until 2030-01-01T00:00:00Z" in page.text
    assert "/problems/sat-small/references/held-out" not in page.text
    answer = api.get("/problems/sat-small/references/held-out")
    assert answer.status_code == 403 and SEALED[:40] not in answer.content
    answer = api.get("/problems/private/references/expected")
    assert answer.status_code == 403 and PRIVATE_SECRET not in answer.text


def test_another_participant_s_private_submission_is_not_found(api: TestClient, site: Site) -> None:
    csrf = login(api, site, "alice")
    made = api.post(
        "/problems/private/submit",
        data={"csrf": csrf, "summary": "alice's words"},
        files={"answer": ("a", b"42\n")},
        follow_redirects=False,
    )
    assert made.status_code == 303
    path = made.headers["location"]
    mine = api.get(path)
    assert "Recorded; results on" in mine.text and "Verified" not in mine.text
    with TestClient(site.app) as bob:
        login(bob, site, "bob")
        theirs = bob.get(path)
        assert theirs.status_code == 404
        assert "alice" not in theirs.text.replace("Signed in as", "")
        assert "words" not in theirs.text


def test_roles_gate_the_pages(api: TestClient, site: Site) -> None:
    login(api, site, "alice")
    assert api.get("/review").status_code == 403
    assert api.get("/manage").status_code == 403
    page = api.get("/problems/sat-small")
    assert 'type="file"' in page.text
    with TestClient(site.app) as nobody:
        login(nobody, site, "nobody")
        page = nobody.get("/problems/sat-small")
        assert 'type="file"' not in page.text and "cannot submit" in page.text


class _Controls(HTMLParser):
    """Every visible form control, and whether a label names it."""

    def __init__(self) -> None:
        super().__init__()
        self.ids_labelled: set[str] = set()
        self.controls: list[tuple[str, str | None, bool]] = []  # (name, id, inside a label)
        self.depth = 0
        self.headings: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "label":
            self.depth += 1
            if found.get("for"):
                self.ids_labelled.add(str(found["for"]))
        elif tag in ("input", "textarea", "select") and found.get("type") != "hidden":
            labelled = self.depth > 0 or bool(found.get("aria-label"))
            self.controls.append((str(found.get("name")), found.get("id"), labelled))
        elif tag in ("h1", "h2"):
            self.headings.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.depth -= 1

    def unlabelled(self) -> list[str]:
        return [n for n, i, inside in self.controls if not inside and i not in self.ids_labelled]


def test_every_control_has_a_label_and_every_page_a_heading(api: TestClient, site: Site) -> None:
    essay = (ESSAY / "submissions" / "good" / "essay.md").read_bytes()
    api.post(
        "/v1/problems/reviewed-essay/submissions",
        headers=site.auth("alice"),
        files={"essay": ("essay.md", essay)},
        data={"summary": "A hash chain makes every edit to a ledger detectable downstream."},
    )
    csrf = login(api, site, "rev1")
    seat = re.search(r'name="seat" value="([^"]+)"', api.get("/review").text)
    assert seat is not None
    claimed = api.post("/review/claim", data={"csrf": csrf, "seat": seat.group(1)})
    assert claimed.status_code == 200 and "Record my response" in claimed.text
    pages = [claimed.text, api.get("/review").text]
    with TestClient(site.app) as manager:
        login(manager, site, "mgr")
        pages += [manager.get(p).text for p in ("/manage", "/problems", "/problems/sat-small")]
    pages.append(api.get("/login").text)
    for html in pages:
        parsed = _Controls()
        parsed.feed(html)
        assert not parsed.unlabelled(), parsed.unlabelled()
        assert parsed.headings[:1] == ["h1"] and parsed.headings.count("h1") == 1
