"""Publishing a problem from an uploaded folder archive, through the API (``POST /v1/problems``)
and the manager page: the same path as ``assay problem publish FOLDER`` (same ids, recorded as
the uploader), managers only, a problem's revisions only by its managers, and a bad archive is
one 4xx naming what is wrong with nothing published. The hostile archives themselves are in
tests/adversarial/test_archive_extraction.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from starlette.testclient import TestClient

from assay import Config
from assay.platform import Platform
from tests.web.archives import tar_gz_of, zip_of_contents
from tests.web.conftest import EXAMPLES, SAT, Site
from tests.web.test_pages import login


def published(site: Site) -> list[tuple[str, str]]:
    """(kind, subject) of every publishing entry, in order."""
    with Platform.open(site.config) as platform:
        kinds = ("problem.published", "revision.published", "contract.published")
        return [(e.kind, e.subject) for e in platform.ledger.find(kind=kinds)]


def upload(api: TestClient, site: Site, user: str, data: bytes, name: str = "p.tar.gz") -> object:
    return api.post("/v1/problems", headers=site.auth(user), files={"archive": (name, data)})


def test_a_manager_publishes_a_problem_and_a_revision_from_an_archive(
    api: TestClient, site: Site, tmp_path: Path
) -> None:
    folder = tmp_path / "json-config"
    shutil.copytree(EXAMPLES / "json-config", folder)
    before = published(site)
    first = upload(api, site, "mgr", tar_gz_of(folder))
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["schema"] == "assay.published/1" and body["problem"] == "json-config"
    with Platform.open(site.config) as platform:
        entry = platform.ledger.find(kind="problem.published", subject="json-config")[0]
        assert entry.body["managers"] == ["mgr"]
    elsewhere = Config(db=f"sqlite:///{tmp_path / 'elsewhere.db'}")
    with Platform.open(elsewhere) as platform:  # the folder published as the CLI does
        direct = platform.publish(folder, "someone")
    assert (direct.revision, direct.contract) == (body["revision"], body["contract"])
    again = upload(api, site, "mgr", zip_of_contents(folder), "p.zip")
    assert again.status_code == 200 and again.json()["revision"] == body["revision"]
    assert not again.json()["new"]
    statement = folder / "statement.md"
    statement.write_text(statement.read_text() + "\nOne more sentence.\n")
    revised = upload(api, site, "mgr", tar_gz_of(folder))
    assert revised.status_code == 201 and revised.json()["revision"] != body["revision"]
    shown = api.get("/v1/problems/json-config", headers=site.auth("alice")).json()
    assert shown["revision"] == revised.json()["revision"]
    assert len(published(site)) == len(before) + 4  # problem, contract, two revisions


def test_publishing_is_for_managers_and_a_revision_for_the_problem_s_managers(
    api: TestClient, site: Site
) -> None:
    with Platform.open(site.config) as platform:
        other = platform.reviews.add_user("mgr2", [], "admin", ["manager"]).token
    before = published(site)
    for user in ("alice", "rev1", "nobody"):
        refused = upload(api, site, user, tar_gz_of(SAT))
        assert refused.status_code == 403 and "manager" in refused.json()["detail"]
    foreign = api.post(
        "/v1/problems",
        headers={"Authorization": f"Bearer {other}"},
        files={"archive": ("p.tar.gz", tar_gz_of(SAT))},
    )
    assert foreign.status_code == 403, foreign.text
    assert "'mgr2' does not manage problem 'sat-small'" in foreign.json()["detail"]
    assert published(site) == before


def test_a_bad_archive_is_one_clear_4xx_and_publishes_nothing(
    api: TestClient, site: Site, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "problem.yaml").write_text(json.dumps({"id": "broken", "title": "t"}))
    before = published(site)
    cases = [
        ({"archive": ("p.txt", b"id: x\n")}, 422, "archive: not a .tar.gz or .zip"),
        ({"archive": ("p.tar.gz", tar_gz_of(broken))}, 422, "problem.yaml: statement: Field"),
        (
            {"other": ("p.tar.gz", tar_gz_of(SAT))},
            422,
            "other: a publish form holds only the archive file",
        ),
        ({}, 422, "x: a publish form holds only the archive file"),
        ({"archive": ("p.tar.gz", b"")}, 422, "archive: give the problem folder"),
    ]
    for files, status, message in cases:
        answer = api.post(
            "/v1/problems",
            headers=site.auth("mgr"),
            files=files or None,
            data=None if files else {"x": "y"},
        )
        assert answer.status_code == status, answer.text
        assert message in answer.json()["detail"], answer.text
    assert published(site) == before


def test_the_manager_page_publishes_and_shows_a_refusal_beside_the_field(
    api: TestClient, site: Site, tmp_path: Path
) -> None:
    csrf = login(api, site, "mgr")
    page = api.get("/manage")
    assert page.status_code == 200 and 'name="archive"' in page.text
    folder = tmp_path / "json-config"
    shutil.copytree(EXAMPLES / "json-config", folder)
    data = tar_gz_of(folder)
    before = published(site)
    forged = api.post("/manage/publish", data={"csrf": "0" * 64}, files={"archive": ("p", data)})
    assert forged.status_code == 403 and published(site) == before
    bad = api.post(
        "/manage/publish", data={"csrf": csrf}, files={"archive": ("p.zip", b"PK\x03\x04junk")}
    )
    assert bad.status_code == 422
    assert 'id="err-archive"' in bad.text and "not a valid zip archive" in bad.text
    assert 'aria-describedby="err-archive"' in bad.text
    assert published(site) == before
    done = api.post("/manage/publish", data={"csrf": csrf}, files={"archive": ("p", data)})
    assert done.status_code == 200, done.text
    assert 'id="published"' in done.text and "json-config" in done.text
    assert ("problem.published", "json-config") in published(site)
    assert "json-config" in api.get("/manage").text  # now among the problems you manage


def test_an_uploaded_checker_program_conforms_before_it_judges(api: TestClient, site: Site) -> None:
    """The conformance fixtures of an author's checker run at publish, as for a folder: the
    archive's checker is the same bytes, and it judges a submission afterwards."""
    folder = EXAMPLES / "checker-program"
    done = upload(api, site, "mgr", zip_of_contents(folder), "checker.zip")
    assert done.status_code == 201, done.text
    [conformance] = done.json()["conformance"]
    assert conformance["passed"], conformance
    good = (folder / "submissions" / "good" / "coloring.txt").read_bytes()
    run = api.post(
        "/v1/problems/checker-program/submissions",
        headers=site.auth("alice"),
        files={"coloring": ("c.txt", good)},
    )
    assert run.status_code == 201 and run.json()["status"] == "verified", run.text
