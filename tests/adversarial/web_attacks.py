"""Shared by the tests/adversarial/test_web_*.py files (helper "adv-web"): one real site per
test module (tests/web/conftest.py's problems and users), a logged-in page client, and the
ledger's entry count, so an attack that is refused can be shown to have recorded nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform
from tests.web.conftest import SAT, Site, make_site

GOOD = (SAT / "submissions" / "good" / "assignment.txt").read_bytes()
BAD = (SAT / "submissions" / "bad" / "assignment.txt").read_bytes()
SEALED = (SAT / "sealed" / "held-out.cnf").read_bytes()


def site_for(tmp: Path) -> Iterator[Site]:
    """A site with a second manager, ``mgr2``, who manages only a problem of their own."""
    found = make_site(tmp)
    from tests.platform.conftest import make_problem

    other = make_problem(
        tmp / "other",
        problem="other",
        contract={
            "roles": [{"name": "answer", "required": True, "max_bytes": 1024}],
            "references": [],
            "acceptance": "The answer holds 42.",
            "stages": [
                {
                    "name": "s",
                    "type": "sandbox",
                    "checks": [{"kind": "file_contains", "path": "answer", "pattern": "42"}],
                }
            ],
        },
    )
    with Platform.open(found.config) as platform:
        platform.publish(other, "mgr2")
        view = platform.reviews.add_user("mgr2", [], "admin", ["manager"])
        assert view.token is not None
        found.tokens["mgr2"] = view.token
    yield found
    found.app.state.web.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    yield from site_for(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="module")
def api(site: Site) -> Iterator[TestClient]:
    with TestClient(site.app, raise_server_exceptions=False) as client:
        yield client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]*)"', html)
    assert found, "no csrf field on the page"
    return found.group(1)


def login(client: TestClient, site: Site, user: str) -> str:
    """Log ``client`` in as ``user`` through the form; the session's CSRF token."""
    form = client.get("/login")
    done = client.post(
        "/login",
        data={"csrf": csrf_of(form.text), "token": site.tokens[user], "next": "/problems"},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    return csrf_of(client.get("/problems").text)


def entries(site: Site, kind: str | None = None) -> int:
    with Platform.open(site.config) as platform:
        return len(platform.ledger.find(kind=kind) if kind else platform.ledger.find())


def newcomer(site: Site, name: str, role: str = "participant") -> dict[str, str]:
    """A fresh user (so one test's allowance use never limits another's): their auth header."""
    with Platform.open(site.config) as platform:
        view = platform.reviews.add_user(name, [], "admin", [role])
    assert view.token is not None
    site.tokens[name] = view.token
    return {"Authorization": f"Bearer {view.token}"}
