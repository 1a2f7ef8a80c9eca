"""Concluding an external stage through the web by someone the stage does not name, twice, for a
run that no longer counts, with HTML in the words, or with evidence about other work (helper
"adv-webarchive").

The page ``/submissions/ID/external/STAGE`` and ``POST /v1/submissions/ID/external`` are tried as
the submission's own participant, another participant, a reviewer, a manager of the problem, and
the party of the problem's *other* external stage (by changing the stage in the URL or the body):
each is refused with nothing recorded. A form posted again concludes nothing twice; a run whose
checker was revoked is not made to count by a party's "verified"; a reason or evidence carrying
markup is shown escaped on another user's page. A supplier's report about one entry no longer
verifies another: the example's rule stage binds the report's ``/image`` to the entry's, and
the report is refused (``binds``; ``tests/platform/test_rule_binds.py`` tries the other
instances)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform
from tests.adversarial.web_attacks import csrf_of, login, newcomer, site_for
from tests.platform.conftest import make_problem
from tests.web.conftest import EXAMPLES, Site

PROTOCOL = (EXAMPLES / "external-party" / "submissions" / "good" / "protocol.md").read_bytes()
BENCH = EXAMPLES / "external-benchmark" / "submissions"
GOOD_REPORT = (BENCH / "good" / "report.json").read_text()
SCRIPT = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def two_parties(root: Path, problem: str = "two-parties") -> Path:
    """Two party stages after a free sandbox stage: ``first`` is lab-a's, ``second`` lab-b's."""
    party = {"type": "external", "mechanism": "party"}
    return make_problem(
        root,
        problem=problem,
        contract={
            "roles": [{"name": "doc", "required": True, "max_bytes": 1000}],
            "acceptance": "Two labs agree.",
            "stages": [
                {
                    "name": "form",
                    "type": "sandbox",
                    "checks": [{"kind": "file_contains", "path": "doc", "pattern": "ok"}],
                },
                {"name": "first", "party": "lab-a", **party},
                {"name": "second", "party": "lab-b", **party},
            ],
        },
        policy={"allowance": {"count": 50, "window_hours": 24}},
    )


def host_ref(root: Path) -> Path:
    """A rule stage whose schema refers to host files by ``$ref`` (a manager's archive can say
    so): the rule must not read them."""
    refs = {"a": {"$ref": "file:///etc/passwd"}, "b": {"$ref": "/etc/passwd"}}
    return make_problem(
        root,
        problem="host-ref",
        contract={
            "roles": [{"name": "doc", "required": True, "max_bytes": 1000}],
            "acceptance": "The report meets the rule.",
            "stages": [
                {
                    "name": "rule",
                    "type": "external",
                    "mechanism": "rule",
                    "supplied_by": ["operator"],
                    "evidence_schema": {"type": "object", "properties": refs},
                }
            ],
        },
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("external")
    for found in site_for(tmp):
        with Platform.open(found.config) as platform:
            platform.publish(EXAMPLES / "external-party", "mgr")
            platform.publish(EXAMPLES / "external-benchmark", "mgr")
            platform.publish(two_parties(tmp / "folders"), "mgr")
            # its own manager: revoking its checkers touches no other test's problem
            platform.publish(two_parties(tmp / "folders", "revocable"), "mgr3")
            platform.publish(host_ref(tmp / "folders"), "mgr")
            for name in ("replication-lab", "operator", "lab-a", "lab-b"):
                found.tokens[name] = platform.reviews.add_user(name, ["labs"], "admin").token or ""
        yield found


@pytest.fixture
def client(site: Site) -> Iterator[TestClient]:
    with TestClient(site.app, raise_server_exceptions=False) as fresh:
        yield fresh


def submit(client: TestClient, site: Site, user: str, problem: str, files: dict[str, bytes]) -> str:
    answer = client.post(
        f"/v1/problems/{problem}/submissions",
        headers=site.auth(user),
        files={role: (role, data) for role, data in files.items()},
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["submission"])


def recorded(site: Site) -> list[dict[str, object]]:
    with Platform.open(site.config) as platform:
        return [e.body for e in platform.ledger.find(kind="external.recorded")]


def verdict(site: Site, submission: str) -> dict[str, object]:
    with Platform.open(site.config) as platform:
        return platform.show(submission, "mgr").to_json()["verdict"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("who", "stage"),
    [
        ("owner", "first"),  # the submission's own participant
        ("bob", "first"),  # another participant
        ("rev1", "first"),  # a reviewer
        ("mgr", "first"),  # the problem's manager
        ("mgr2", "first"),  # another problem's manager
        ("lab-b", "first"),  # the party of the other stage, at this stage's URL
    ],
)
def test_only_the_named_party_concludes_its_stage(
    client: TestClient, site: Site, who: str, stage: str
) -> None:
    owner = f"owner-{who}"
    newcomer(site, owner)
    sid = submit(client, site, owner, "two-parties", {"doc": b"ok"})
    user = owner if who == "owner" else who
    before = recorded(site)
    csrf = login(client, site, user)
    url = f"/submissions/{sid}/external/{stage}"
    assert client.get(url).status_code == 404
    posted = client.post(url, data={"csrf": csrf, "result": "verified", "reason": "trust me"})
    assert posted.status_code == 404, posted.text
    body = {"stage": stage, "result": "verified", "reason": "trust me"}
    answer = client.post(f"/v1/submissions/{sid}/external", headers=site.auth(user), json=body)
    assert answer.status_code in (403, 404, 422), answer.text
    assert recorded(site) == before
    assert verdict(site, sid)["standing"] is None


def test_the_first_party_cannot_conclude_the_second_stage_out_of_turn(
    client: TestClient, site: Site
) -> None:
    """lab-a's own stage waits; its form URL with the other stage's name, or the API with
    ``stage: second``, is refused: each party concludes only its own stage."""
    newcomer(site, "owner-turn")
    sid = submit(client, site, "owner-turn", "two-parties", {"doc": b"ok"})
    before = len(recorded(site))
    csrf = login(client, site, "lab-a")
    wrong = client.post(
        f"/submissions/{sid}/external/second",
        data={"csrf": csrf, "result": "verified", "reason": "x"},
    )
    assert wrong.status_code == 404
    body = {"stage": "second", "result": "verified", "reason": "x"}
    api = client.post(f"/v1/submissions/{sid}/external", headers=site.auth("lab-a"), json=body)
    assert api.status_code in (403, 404, 422), api.text
    csrf = login(client, site, "lab-b")  # its own stage, but the run waits at the first
    early = client.post(
        f"/submissions/{sid}/external/second",
        data={"csrf": csrf, "result": "verified", "reason": "x"},
    )
    assert early.status_code == 422 and "no run of" in early.text
    assert len(recorded(site)) == before


def test_a_form_posted_again_concludes_nothing_twice(client: TestClient, site: Site) -> None:
    newcomer(site, "owner-twice")
    sid = submit(client, site, "owner-twice", "external-party", {"protocol": PROTOCOL})
    csrf = login(client, site, "replication-lab")
    url = f"/submissions/{sid}/external/replication"
    form = {"csrf": csrf, "result": "verified", "reason": "reproduced"}
    before = len(recorded(site))
    first = client.post(url, data=form, follow_redirects=False)
    assert first.status_code == 303
    for changed in (form, {**form, "result": "refuted", "reason": "changed my mind"}):
        again = client.post(url, data=changed, follow_redirects=False)
        assert again.status_code == 422 and "no run of" in again.text
        api = client.post(
            f"/v1/submissions/{sid}/external",
            headers=site.auth("replication-lab"),
            json={"stage": "replication", "result": changed["result"], "reason": "again"},
        )
        assert api.status_code == 422, api.text
    assert len(recorded(site)) == before + 1
    assert verdict(site, sid)["standing"] == "verified"


def test_a_party_s_verified_does_not_make_a_revoked_run_count(
    client: TestClient, site: Site
) -> None:
    newcomer(site, "owner-revoked")
    sid = submit(client, site, "owner-revoked", "revocable", {"doc": b"ok"})
    with Platform.open(site.config) as platform:
        view = platform.show(sid, "mgr3").to_json()
        checkers = {c for run in view["runs"] for st in run["stages"] for c in st["checkers"]}
        for checker in checkers:
            platform.revoke(checker, "found broken", "mgr3")
    for lab, stage in (("lab-a", "first"), ("lab-b", "second")):
        csrf = login(client, site, lab)
        done = client.post(
            f"/submissions/{sid}/external/{stage}",
            data={"csrf": csrf, "result": "verified", "reason": "fine"},
            follow_redirects=False,
        )
        assert done.status_code in (303, 422), done.text
    shown = verdict(site, sid)
    assert shown["standing"] != "verified" and shown["latest"] != "verified", shown
    login(client, site, "owner-revoked")
    assert 'id="verdict">Verified<' not in client.get(f"/submissions/{sid}").text


@pytest.mark.parametrize(
    "viewer", ["owner-markup", "mgr"], ids=["participant-page", "manager-page"]
)
def test_markup_in_a_reason_is_shown_as_text_on_another_user_s_page(
    client: TestClient, site: Site, viewer: str
) -> None:
    owner = "owner-markup"
    if owner not in site.tokens:
        newcomer(site, owner)
    sid = submit(client, site, owner, "external-party", {"protocol": PROTOCOL})
    csrf = login(client, site, "replication-lab")
    done = client.post(
        f"/submissions/{sid}/external/replication",
        data={"csrf": csrf, "result": "refuted", "reason": f"no {SCRIPT} \"' &"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    login(client, site, viewer)
    page = client.get(f"/submissions/{sid}")
    assert page.status_code == 200
    assert "<script>alert(1)" not in page.text and "<img src=x" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_markup_in_evidence_is_shown_as_text(client: TestClient, site: Site) -> None:
    """Evidence that fails the rule is refuted with the failing place named; evidence that is
    not JSON stays in the field: both as text, never as markup."""
    owner = "owner-evidence"
    newcomer(site, owner)
    entry = (BENCH / "good" / "entry.json").read_bytes()
    sid = submit(client, site, owner, "external-benchmark", {"entry": entry})
    csrf = login(client, site, "operator")
    url = f"/submissions/{sid}/external/benchmark"
    loose = client.post(url, data={"csrf": csrf, "evidence": f"</textarea>{SCRIPT}"})
    assert loose.status_code == 422
    assert (
        "</textarea><script>" not in loose.text and "&lt;/textarea&gt;&lt;script&gt;" in loose.text
    )
    hostile = json.loads(GOOD_REPORT)
    hostile["harness"] = f"</pre>{SCRIPT}"
    hostile[f"<b>{SCRIPT}</b>"] = 1
    done = client.post(
        url, data={"csrf": csrf, "evidence": json.dumps(hostile)}, follow_redirects=False
    )
    assert done.status_code == 303
    assert verdict(site, sid)["standing"] == "refuted"
    login(client, site, owner)
    page = client.get(f"/submissions/{sid}").text
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>" not in page


def test_a_report_about_another_entry_does_not_verify_this_one(
    client: TestClient, site: Site
) -> None:
    owner = "owner-other-image"
    newcomer(site, owner)
    other = json.loads((BENCH / "good" / "entry.json").read_text())
    other["image"] = "registry.example/rival/slow@sha256:" + "0" * 64
    sid = submit(client, site, owner, "external-benchmark", {"entry": json.dumps(other).encode()})
    csrf = login(client, site, "operator")
    refused = client.post(
        f"/submissions/{sid}/external/benchmark",
        data={"csrf": csrf, "evidence": GOOD_REPORT},  # the report names the *good* image
        follow_redirects=False,
    )
    assert refused.status_code == 422 and "about other work" in refused.text
    assert verdict(site, sid)["standing"] is None  # the stage binds /image: still waiting


def test_the_form_needs_the_session_s_csrf_token(client: TestClient, site: Site) -> None:
    owner = "owner-csrf"
    newcomer(site, owner)
    sid = submit(client, site, owner, "external-party", {"protocol": PROTOCOL})
    with TestClient(site.app, raise_server_exceptions=False) as other:
        foreign = login(other, site, "lab-a")
    login(client, site, "replication-lab")
    url = f"/submissions/{sid}/external/replication"
    page_csrf = csrf_of(client.get(url).text)
    assert page_csrf != foreign
    before = len(recorded(site))
    for fields in ({}, {"csrf": foreign}, {"csrf": page_csrf[:-1] + "0"}):
        answer = client.post(url, data={**fields, "result": "verified", "reason": "x"})
        assert answer.status_code == 403
    client.cookies.clear()
    gone = client.post(
        url, data={"csrf": page_csrf, "result": "verified", "reason": "x"}, follow_redirects=False
    )
    assert gone.status_code == 303 and gone.headers["location"].startswith("/login")
    assert len(recorded(site)) == before


def test_a_rule_that_refers_to_host_files_reads_none(client: TestClient, site: Site) -> None:
    owner = "owner-host-ref"
    newcomer(site, owner)
    sid = submit(client, site, owner, "host-ref", {"doc": b"x"})
    csrf = login(client, site, "operator")
    done = client.post(
        f"/submissions/{sid}/external/rule",
        data={"csrf": csrf, "evidence": '{"a": 1, "b": 2}'},
        follow_redirects=False,
    )
    assert done.status_code == 303
    shown = verdict(site, sid)
    assert shown["standing"] == "inconclusive", shown
    first_line = Path("/etc/passwd").read_text().splitlines()[0]
    login(client, site, owner)
    page = client.get(f"/submissions/{sid}").text
    assert "never fetched" in page and first_line not in page
