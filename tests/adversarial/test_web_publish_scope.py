"""Publishing from an archive beyond what the uploader manages (helper "adv-webarchive").

A manager of one problem uploads an archive whose ``problem.yaml`` names another's problem (a
new revision of it, an old revision made current again, through the API or the page, as a
``.tar.gz`` or a ``.zip`` with the folder at the top); or names another team's verifier family
(``verifier: NAME``), which adds a version to it by being published, so the family would list the
intruder's checker among the implementations that "conformed" (refused on the web since this
session: the family's owners are the managers of the problems whose contracts name it); or
posts the page's form without its CSRF token, with another manager's, or without a session.
Every one is refused with nothing recorded. And a burst of uploads at once cannot hold more
than a few archives in memory: past ``PUBLISHING_AT_ONCE`` the server answers 429."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform, verifier_view
from assay.web import _access
from tests.adversarial.web_attacks import api, entries, login, site  # noqa: F401 (fixtures)
from tests.platform.conftest import make_problem
from tests.web.archives import tar_gz_of, zip_of_contents
from tests.web.conftest import SAT, Site

SANDBOX = {"name": "s", "type": "sandbox", "checks": [{"kind": "answer_equals", "value": "1"}]}


def family_problem(root: Path, problem: str, verifier: str, acceptance: str) -> Path:
    return make_problem(
        root,
        problem=problem,
        contract={"acceptance": acceptance, "stages": [SANDBOX], "verifier": verifier},
    )


def publish(api: TestClient, site: Site, user: str, data: bytes) -> object:  # noqa: F811
    return api.post("/v1/problems", headers=site.auth(user), files={"archive": ("p", data)})


@pytest.mark.parametrize("pack", ["tar-folder", "zip-contents"])
def test_a_manager_of_one_problem_cannot_publish_another_s_revision(
    api: TestClient,  # noqa: F811
    site: Site,  # noqa: F811
    tmp_path: Path,
    pack: str,
) -> None:
    import shutil

    folder = tmp_path / "sat-small"
    shutil.copytree(SAT, folder)
    (folder / "statement.md").write_text("Rewritten by someone who does not manage it.\n")
    data = tar_gz_of(folder) if pack == "tar-folder" else zip_of_contents(folder)
    before = entries(site)
    answer = publish(api, site, "mgr2", data)
    assert answer.status_code == 403, answer.text
    assert "'mgr2' does not manage problem 'sat-small'" in answer.json()["detail"]
    csrf = login(api, site, "mgr2")
    page = api.post("/manage/publish", data={"csrf": csrf}, files={"archive": ("p", data)})
    assert page.status_code == 403 and 'id="err-archive"' in page.text
    assert entries(site) == before + 1  # the login's session, nothing else


def test_an_earlier_revision_of_another_s_problem_is_not_made_current_again(
    api: TestClient,  # noqa: F811
    site: Site,  # noqa: F811
) -> None:
    """Publishing a revision that exists makes it current again (the CLI's rule): only for
    the problem's managers."""
    with Platform.open(site.config) as platform:
        current = platform.problem("sat-small").revision
    answer = publish(api, site, "mgr2", tar_gz_of(SAT))
    assert answer.status_code == 403, answer.text
    with Platform.open(site.config) as platform:
        assert platform.problem("sat-small").revision == current


def test_a_manager_cannot_add_a_version_to_another_team_s_verifier_family(
    api: TestClient,  # noqa: F811
    site: Site,  # noqa: F811
    tmp_path: Path,
) -> None:
    with Platform.open(site.config) as platform:
        platform.publish(family_problem(tmp_path / "a", "fam-a", "fidelity", "v1"), "mgr")
        assert len(verifier_view(platform.ledger, "fidelity").versions) == 1
    intruder = family_problem(tmp_path / "b", "fam-intruder", "fidelity", "an intruder's v2")
    before = entries(site)
    answer = publish(api, site, "mgr2", tar_gz_of(intruder))
    assert answer.status_code == 403, answer.text
    assert "may not add a version to verifier 'fidelity'" in answer.json()["detail"]
    assert entries(site) == before
    with Platform.open(site.config) as platform:
        assert len(verifier_view(platform.ledger, "fidelity").versions) == 1
    # the family's own manager adds a version, from another problem of theirs
    own = family_problem(tmp_path / "c", "fam-c", "fidelity", "v2 by its team")
    added = publish(api, site, "mgr", tar_gz_of(own))
    assert added.status_code == 201, added.text
    # and a new family is anyone's to start
    fresh = family_problem(tmp_path / "d", "fam-d", "mgr2-family", "v1")
    assert publish(api, site, "mgr2", tar_gz_of(fresh)).status_code == 201
    with Platform.open(site.config) as platform:
        assert len(verifier_view(platform.ledger, "fidelity").versions) == 2


@pytest.mark.parametrize("csrf", ["missing", "forged", "another-manager-s", "no-session"])
def test_the_page_publishes_nothing_without_the_session_s_csrf_token(
    site: Site,  # noqa: F811
    tmp_path: Path,
    csrf: str,
) -> None:
    data = tar_gz_of(family_problem(tmp_path, f"csrf-{csrf}", f"csrf-{csrf}", "a"))
    with TestClient(site.app, raise_server_exceptions=False) as other:
        theirs = login(other, site, "mgr2")
    with TestClient(site.app, raise_server_exceptions=False) as browser:
        login(browser, site, "mgr")
        if csrf == "no-session":
            browser.cookies.clear()
        fields = {"missing": {}, "forged": {"csrf": "0" * 64}}.get(csrf, {"csrf": theirs})
        before = entries(site)
        answer = browser.post(
            "/manage/publish",
            data=fields,
            files={"archive": ("p.tar.gz", data)},
            follow_redirects=False,
        )
    assert answer.status_code in (303, 403), answer.text
    if csrf == "no-session":
        assert answer.headers["location"].startswith("/login")
    assert entries(site) == before


def test_a_burst_of_publishes_holds_only_a_few_archives_at_once(
    api: TestClient,  # noqa: F811
    site: Site,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each publish holds the upload, its content and its members in memory (up to about four
    times the 64 MiB content cap); a burst of concurrent uploads must not hold more than
    ``PUBLISHING_AT_ONCE`` of them: the rest are told to retry (429), nothing published."""
    inside = threading.Event()
    release = threading.Event()
    real = _access.publish_archive

    def slow(*args: object, **kwargs: object) -> object:
        inside.set()
        assert release.wait(30)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_access, "publish_archive", slow)
    held = [
        tar_gz_of(family_problem(tmp_path / str(i), f"burst-{i}", f"burst-{i}", "a"))
        for i in range(_access.PUBLISHING_AT_ONCE)
    ]
    answers: list[int] = []

    def one(data: bytes) -> None:
        with TestClient(site.app, raise_server_exceptions=False) as client:
            answers.append(publish(client, site, "mgr", data).status_code)  # type: ignore[attr-defined]

    threads = [threading.Thread(target=one, args=(data,)) for data in held]
    for thread in threads:
        thread.start()
    try:
        assert inside.wait(30)
        for _ in range(50):  # until every held publish is inside
            if site.app.state.web._publishing._value == 0:
                break
            threading.Event().wait(0.1)
        extra = tar_gz_of(family_problem(tmp_path / "x", "burst-x", "burst-x", "a"))
        refused = publish(api, site, "mgr", extra)
        assert refused.status_code == 429, refused.text  # type: ignore[attr-defined]
        assert "being published now" in refused.json()["detail"]  # type: ignore[attr-defined]
    finally:
        release.set()
        for thread in threads:
            thread.join(60)
    assert answers == [201] * len(held)
    with Platform.open(site.config) as platform:
        assert not platform.ledger.find(kind="problem.published", subject="burst-x")
