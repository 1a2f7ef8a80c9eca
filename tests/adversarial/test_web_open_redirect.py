"""Open redirects through the login form's ``next`` (helper "adv-web"): after a login the
browser goes only to a path on this site, whatever ``next`` says (another host, a scheme,
backslashes, tabs and line breaks a browser strips, header injection)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from tests.adversarial.web_attacks import csrf_of, site
from tests.web.conftest import Site

__all__ = ["site"]

NEXT = [
    "//evil.example",
    "///evil.example",
    "https://evil.example",
    "http:evil.example",
    "javascript:alert(1)",
    "/\\evil.example",
    "\\\\evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\nSet-Cookie: assay_session=x",
    "/%2F%2Fevil.example",
    "/%5Cevil.example",
    " //evil.example",
    "evil.example",
]


def _lands_on_this_site(location: str) -> bool:
    # What a browser does with a Location header: strip tabs and line breaks, then resolve.
    cleaned = location.replace("\t", "").replace("\n", "").replace("\r", "")
    parts = urlsplit(cleaned)
    return (
        not parts.scheme
        and not parts.netloc
        and cleaned.startswith("/")
        and (not cleaned.startswith("//") and not cleaned.startswith("/\\"))
    )


@pytest.mark.parametrize("next_", NEXT)
def test_login_never_sends_the_browser_off_site(site: Site, next_: str) -> None:
    with TestClient(site.app) as client:
        form = client.get("/login", params={"next": next_})
        answer = client.post(
            "/login",
            data={"csrf": csrf_of(form.text), "token": site.tokens["alice"], "next": next_},
            follow_redirects=False,
        )
        assert answer.status_code == 303
        location = answer.headers["location"]
        assert _lands_on_this_site(location), location
        assert "\r" not in location and "\n" not in location
        assert "set-cookie" not in {k.lower() for k in answer.headers if k.lower() != "set-cookie"}
        assert answer.headers.get_list("set-cookie")[0].startswith("assay_session=")


@pytest.mark.parametrize("path", ["//evil.example/x", "/\\evil.example"])
def test_the_login_redirect_from_a_page_stays_on_site(site: Site, path: str) -> None:
    with TestClient(site.app) as client:
        answer = client.get(path, follow_redirects=False)
        if answer.status_code in (301, 302, 303, 307, 308):
            assert _lands_on_this_site(answer.headers["location"])
