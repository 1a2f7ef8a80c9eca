"""Acting as someone else through the people's API and pages (helper "adv-web"): a token
where a session id belongs and back, a replaced token, a session after logout or after its
token was replaced, another session's CSRF token, a login without its form cookie, names that
casefold equal, and the login form's cookie over https. The acting user is always the
token's or the session's owner, and a refused write records nothing."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from assay._errors import InvalidInput
from assay.platform import Platform
from tests.adversarial.web_attacks import api, csrf_of, entries, login, newcomer, site
from tests.web.conftest import Site

__all__ = ["api", "site"]


def test_a_token_is_not_a_session_and_a_session_is_not_a_token(api: TestClient, site: Site) -> None:
    with TestClient(site.app) as client:
        login(client, site, "alice")
        session = client.cookies.get("assay_session")
    assert session
    as_bearer = api.get("/v1/me", headers={"Authorization": f"Bearer {session}"})
    assert as_bearer.status_code == 401
    with TestClient(site.app) as client:
        client.cookies.set("assay_session", site.tokens["alice"])
        page = client.get("/problems", follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"].startswith("/login")


@pytest.mark.parametrize(
    "header",
    ["Bearer {t} x", "Bearer\t{t}", "bearer {t}extra", "Bearer {T}", "Token {t}", "{t}"],
)
def test_a_mangled_bearer_header_is_no_one(api: TestClient, site: Site, header: str) -> None:
    token = site.tokens["rev1"]
    value = header.format(t=token, T=token.upper())
    assert api.get("/v1/me", headers={"Authorization": value}).status_code == 401


@pytest.mark.parametrize("how", ["logout", "new token"])
def test_a_dead_session_and_its_csrf_token_act_for_no_one(site: Site, how: str) -> None:
    name = f"gone-{how.replace(' ', '-')}"
    newcomer(site, name, "manager")
    with TestClient(site.app) as client:
        csrf = login(client, site, name)
        session = client.cookies.get("assay_session")
        if how == "logout":
            client.post("/logout", data={"csrf": csrf}, follow_redirects=False)
        else:
            newcomer(site, name, "manager")
    before = entries(site, "checker.revoked")
    with TestClient(site.app) as replay:
        assert session
        replay.cookies.set("assay_session", session)
        answer = replay.post(
            "/manage/revoke",
            data={"csrf": csrf, "checker": "assay:file_contains@0.1.0", "why": "replayed"},
            follow_redirects=False,
        )
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login")
    assert entries(site, "checker.revoked") == before


def test_a_csrf_token_from_another_user_s_session_is_refused(site: Site) -> None:
    """Mallory (a manager too) plants her own session's CSRF token in mgr2's browser."""
    with TestClient(site.app) as mallory, TestClient(site.app) as victim:
        newcomer(site, "mallory", "manager")
        theirs = login(mallory, site, "mallory")
        login(victim, site, "mgr2")
        before = entries(site, "checker.revoked")
        answer = victim.post(
            "/manage/revoke",
            data={"csrf": theirs, "checker": "assay:file_contains@0.1.0", "why": "forged"},
            follow_redirects=False,
        )
        assert answer.status_code == 403
        assert entries(site, "checker.revoked") == before


@pytest.mark.parametrize(
    "cookie", [None, "", "forged"], ids=["no login cookie", "empty cookie", "other value"]
)
def test_login_csrf_without_the_form_s_cookie_starts_no_session(
    site: Site, cookie: str | None
) -> None:
    """A page elsewhere posts the attacker's token to /login (login CSRF): refused."""
    before = entries(site, "web.session.started")
    with TestClient(site.app) as client:
        if cookie is not None:
            client.cookies.set("assay_login", cookie, path="/login")
        answer = client.post(
            "/login",
            data={"csrf": "attacker-chosen", "token": site.tokens["bob"], "next": "/problems"},
            follow_redirects=False,
        )
        assert answer.status_code == 403 and "assay_session" not in answer.cookies
    assert entries(site, "web.session.started") == before


@pytest.mark.parametrize("twin", ["Alice", "ALICE", "ａｌｉｃｅ", "AlIcE"])
def test_a_name_that_casefolds_to_a_user_gets_no_token(site: Site, twin: str) -> None:
    with Platform.open(site.config) as platform, pytest.raises(InvalidInput):
        platform.reviews.add_user(twin, [], "admin", ["manager"])


def test_the_login_cookie_is_secure_over_https(site: Site) -> None:
    with TestClient(site.app, base_url="https://testserver") as client:
        form = client.get("/login")
        assert csrf_of(form.text)
        cookie = form.headers["set-cookie"]
        assert "assay_login=" in cookie
        assert "secure" in cookie.lower()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/me"),
        ("POST", "/v1/revocations"),
        ("POST", "/v1/problems/sat-small/submissions"),
    ],
)
def test_the_api_never_acts_on_a_session_cookie(site: Site, method: str, path: str) -> None:
    """A page elsewhere that makes the browser call the API carries only the cookie: 401."""
    with TestClient(site.app) as client:
        login(client, site, "mgr")
        before = entries(site)
        answer = client.request(method, path, json={"checker": "assay:x@1", "why": "csrf"})
        assert answer.status_code == 401
        assert entries(site) == before


@pytest.mark.parametrize("how", ["csrf as a file", "csrf twice, a wrong one last"])
def test_a_page_upload_with_a_smuggled_csrf_field_is_refused(site: Site, how: str) -> None:
    from tests.adversarial.web_attacks import GOOD

    with TestClient(site.app) as client:
        csrf = login(client, site, "bob")
        before = entries(site, "submission.made")
        if how == "csrf as a file":
            kw: dict = {"files": [("assignment", ("a", GOOD)), ("csrf", ("c", csrf.encode()))]}
        else:
            kw = {"files": [("assignment", ("a", GOOD))], "data": {"csrf": [csrf, "wrong"]}}
        answer = client.post("/problems/sat-small/submit", follow_redirects=False, **kw)
        assert answer.status_code in (403, 422), answer.text[:200]
        assert entries(site, "submission.made") == before
