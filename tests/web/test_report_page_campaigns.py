"""Review campaigns over HTTP (in-process, httpx): managers open one (uploaded files or a runs
query), list and show it as ``assay review campaign show --json`` does; reviewers claim and
answer its seats through the same seat API and pages as a review stage's; bad input names its
field; a form without the session's CSRF token records nothing; an audit of runs shows only
to managers of those runs' problems."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from assay.platform import Platform
from tests.web.conftest import SAT, Site
from tests.web.test_pages import _Controls, csrf_of, login

EXPERT = (
    Path(__file__).resolve().parents[2] / "examples" / "review" / "single-expert.yaml"
).read_text()
GOOD = (SAT / "submissions" / "good" / "assignment.txt").read_bytes()
ITEMS = {"one.md": b"candidate one: a ledger is a hash chain\n", "two.md": b"candidate two\n"}


def campaigns(site: Site) -> int:
    with Platform.open(site.config) as platform:
        return len(platform.reviews.campaigns.all())


def open_files(api: TestClient, site: Site) -> dict:
    answer = api.post(
        "/v1/campaigns",
        headers=site.auth("mgr"),
        data={"protocol": EXPERT},
        files=[("item", (name, data)) for name, data in ITEMS.items()],
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_a_campaign_over_uploaded_files_is_reviewed_through_the_seat_api_and_pages(
    api: TestClient, site: Site
) -> None:
    opened = open_files(api, site)
    cid = opened["campaign"]
    assert opened["schema"] == "assay.campaign/1" and [i["label"] for i in opened["items"]] == [
        "one.md",
        "two.md",
    ]
    assert opened["title"] == "A single expert decides" and opened["candidates"] == 2
    assert opened["source"] == "uploaded by mgr: one.md, two.md"
    listed = api.get("/v1/campaigns", headers=site.auth("mgr")).json()["campaigns"]
    assert [(c["campaign"], c["items"], c["by"]) for c in listed] == [(cid, 2, "mgr")]
    for user in ("rev1", "alice", "erin"):  # the manager role, as /manage
        assert api.get("/v1/campaigns", headers=site.auth(user)).status_code == 403
        assert api.get(f"/v1/campaigns/{cid}", headers=site.auth(user)).status_code == 403

    # erin (group experts) claims item one's seat through the seat API a stage uses
    seats = api.get("/v1/seats", headers=site.auth("erin")).json()["open"]
    mine = sorted(s["seat"] for s in seats if s["seat"].startswith(cid))
    assert len(mine) == 2
    assert not [
        s
        for s in api.get("/v1/seats", headers=site.auth("rev1")).json()["open"]
        if s["seat"].startswith(cid)
    ]
    claimed = api.post(f"/v1/seats/{mine[0]}/claim", headers=site.auth("erin"))
    assert claimed.status_code == 200, claimed.text
    uri = claimed.json()["materials"][0]["uri"]
    material = api.get(
        f"/v1/seats/{mine[0]}/material", params={"uri": uri}, headers=site.auth("erin")
    )
    assert material.status_code == 200 and material.content == ITEMS["one.md"]
    other = api.get(f"/v1/seats/{mine[0]}/material", params={"uri": uri}, headers=site.auth("rev1"))
    assert other.status_code in (403, 404) and ITEMS["one.md"] not in other.content
    response = (
        '{"verdict": "pass", "rationale": "It says what it claims.", '
        f'"citations": ["{uri}"], "confidence": 0.9, "assistance": []}}'
    )
    answered = api.post(f"/v1/seats/{mine[0]}/respond", headers=site.auth("erin"), content=response)
    assert answered.status_code == 200, answered.text
    assert answered.json()["concluded"]["outcome"] == "accept"

    # item two through the pages: the review list, the claim form, the seat page, the response
    with TestClient(site.app, raise_server_exceptions=False) as erin:
        csrf = login(erin, site, "erin")
        assert mine[1] in erin.get("/review").text
        seat_page = erin.post("/review/claim", data={"csrf": csrf, "seat": mine[1]})
        assert seat_page.status_code == 200, seat_page.text
        assert "Record my response" in seat_page.text and "candidate two" in seat_page.text
        assert cid in seat_page.text and "two.md" in seat_page.text
        cite = re.search(r'name="field.citations" value="([^"]+)"', seat_page.text)
        assert cite is not None
        form = {
            "csrf": csrf,
            "seat": mine[1],
            "field.verdict": "fail",
            "field.rationale": "It claims nothing checkable.",
            "field.citations": cite.group(1),
            "field.confidence": "0.7",
            "assisted": "no",
        }
        done = erin.post("/review/respond", data=form)
        assert done.status_code == 200 and "Your response is recorded" in done.text

    # the manager's view: the CLI's document over the API, the page with the decisions
    shown = api.get(f"/v1/campaigns/{cid}", headers=site.auth("mgr"))
    with Platform.open(site.config) as platform:
        assert shown.json() == platform.reviews.campaigns.show(cid, "mgr").to_json()
    assert [(i["label"], i["decision"]) for i in shown.json()["items"]] == [
        ("one.md", "accept"),
        ("two.md", "reject"),
    ]
    with TestClient(site.app, raise_server_exceptions=False) as mgr:
        login(mgr, site, "mgr")
        page = mgr.get(f"/campaigns/{cid}")
        assert page.status_code == 200
        assert "<strong>2 of 2</strong> items decided; 2 of 2 seats answered" in page.text
        assert "<strong>accept</strong>" in page.text and "<strong>reject</strong>" in page.text
        assert cid in mgr.get("/campaigns").text
        assert mgr.get("/campaigns/cmp-0000000000000000").status_code == 404
        for path in ("/campaigns", f"/campaigns/{cid}", "/reports/review"):
            controls = _Controls()
            controls.feed(mgr.get(path).text)
            assert not controls.unlabelled(), (path, controls.unlabelled())
            assert controls.headings[:1] == ["h1"] and controls.headings.count("h1") == 1
    # and the report counts the campaign's decisions, like any review's
    (protocol,) = api.get("/v1/reports/review", headers=site.auth("mgr")).json()["protocols"]
    assert protocol["outcomes"] == {"accept": 1, "reject": 1}
    assert protocol["protocol"] == opened["protocol_id"]


def test_bad_campaign_input_names_its_field_and_records_nothing(
    api: TestClient, site: Site
) -> None:
    auth = site.auth("mgr")
    cases = [
        ({"protocol": EXPERT, "items": "/etc"}, "items: "),
        ({"protocol": EXPERT, "items": "runs:color=red"}, "items: 'color=red'"),
        ({"protocol": EXPERT, "items": "runs:status=any", "sample": "x"}, "sample: "),
        ({"protocol": EXPERT, "items": "runs:status=any", "sample": 0}, "sample: "),
        ({"protocol": EXPERT, "items": "runs:status=any", "seed": 3}, "seed: "),
        ({"protocol": "nodes: [", "items": "runs:status=any"}, "protocol: "),
        ({"protocol": {"nodes": {}}, "items": "runs:status=any"}, "protocol: "),
        ({"items": "runs:status=any"}, "protocol: "),
        ({"protocol": EXPERT, "items": "runs:status=any"}, "items: "),  # no run yet: no items
    ]
    for body, field in cases:
        answer = api.post("/v1/campaigns", headers=auth, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["detail"].startswith(field), (body, answer.json())
    repeated = api.post(
        "/v1/campaigns",
        headers=auth,
        data={"protocol": EXPERT},
        files=[("item", ("a.md", b"1")), ("item", ("a.md", b"2"))],
    )
    assert repeated.status_code == 422 and repeated.json()["detail"].startswith("items: two item")
    assert api.post("/v1/campaigns", headers=site.auth("rev1"), json=cases[0][0]).status_code == 403
    assert campaigns(site) == 0

    # the page's form: no CSRF token, nothing recorded; a bad sample is shown beside its field
    with TestClient(site.app, raise_server_exceptions=False) as page:
        csrf = login(page, site, "mgr")
        form = page.get("/campaigns")
        assert form.status_code == 200 and csrf_of(form.text) == csrf
        fields = {"protocol": EXPERT, "items": "", "sample": "", "seed": ""}
        files = [("item", ("one.md", ITEMS["one.md"]))]
        assert page.post("/campaigns", data=fields, files=files).status_code == 403
        assert (
            page.post("/campaigns", data={**fields, "csrf": "x" * 64}, files=files).status_code
            == 403
        )
        assert campaigns(site) == 0
        bad = page.post("/campaigns", data={**fields, "csrf": csrf, "sample": "many"}, files=files)
        assert (
            bad.status_code == 422
            and 'id="sample-error" class="error">sample: give a whole number' in bad.text
        )
        made = page.post(
            "/campaigns", data={**fields, "csrf": csrf}, files=files, follow_redirects=False
        )
        assert made.status_code == 303 and made.headers["location"].startswith("/campaigns/cmp-")
        assert campaigns(site) == 1


def test_an_audit_of_runs_shows_only_to_managers_of_their_problems(
    api: TestClient, site: Site
) -> None:
    with Platform.open(site.config) as platform:
        other = platform.reviews.add_user("other", [], "admin", ["manager"]).token
    run = api.post(
        "/v1/problems/sat-small/submissions",
        headers=site.auth("alice"),
        files={"assignment": ("assignment.txt", GOOD)},
    )
    assert run.status_code == 201, run.text
    stranger = {"Authorization": f"Bearer {other}"}
    query = {"protocol": EXPERT, "items": "runs:problem=sat-small,status=any"}
    refused = api.post("/v1/campaigns", headers=stranger, json=query)
    assert refused.status_code == 403 and "does not manage problem 'sat-small'" in refused.text
    audit = api.post(
        "/v1/campaigns", headers=site.auth("mgr"), json={**query, "sample": 1, "seed": 7}
    )
    assert audit.status_code == 201, audit.text
    (item,) = audit.json()["items"]
    assert item["automated"] == "verified" and item["target"] == run.json()["submission"]
    cid = audit.json()["campaign"]
    assert api.get("/v1/campaigns", headers=stranger).json() == {"campaigns": []}
    hidden = api.get(f"/v1/campaigns/{cid}", headers=stranger)
    unknown = api.get("/v1/campaigns/cmp-0000000000000000", headers=stranger)
    assert hidden.status_code == unknown.status_code == 404 and hidden.json() == unknown.json()
    assert api.get(f"/v1/campaigns/{cid}", headers=site.auth("mgr")).status_code == 200


HOSTILE = [
    ("GET", "/v1/campaigns/%00", {}),
    ("GET", "/v1/campaigns/cmp-" + "0" * 5000, {}),
    ("GET", "/v1/campaigns/..%2F..%2Fetc", {}),
    ("POST", "/v1/campaigns", {"json": {"protocol": EXPERT, "items": "runs:problem=\x00"}}),
    ("POST", "/v1/campaigns", {"json": {"protocol": EXPERT, "items": 5}}),
    (
        "POST",
        "/v1/campaigns",
        {"json": {"protocol": EXPERT, "items": "runs:", "sample": "9" * 5000}},
    ),
    ("POST", "/v1/campaigns", {"json": {"protocol": 12, "items": "runs:status=any"}}),
    ("POST", "/v1/campaigns", {"json": {"protocol": "a: &x 1\nb: *x", "items": "runs:"}}),
    ("POST", "/v1/campaigns", {"json": ["protocol"]}),
    (
        "POST",
        "/v1/campaigns",
        {"content": b"{" * 10000, "headers": {"content-type": "application/json"}},
    ),
    ("POST", "/v1/campaigns", {"data": {"protocol": EXPERT}, "files": [("other", ("x", b"1"))]}),
    ("POST", "/v1/campaigns", {"data": {"protocol": EXPERT}, "files": [("item", ("..", b"1"))]}),
    ("GET", "/v1/reports/review?protocol=%00&reference=" + "r" * 5000, {}),
]


def test_hostile_campaign_and_report_requests_get_a_clean_refusal(
    api: TestClient, site: Site
) -> None:
    """One site for every case (each is one request; a site per case costs a second)."""
    for method, path, kw in HOSTILE:
        kw = dict(kw)
        headers = {**site.auth("mgr"), **kw.pop("headers", {})}
        answer = api.request(method, path, headers=headers, **kw)
        assert 400 <= answer.status_code < 500, (path, answer.status_code, answer.text[:300])
        assert "Traceback" not in answer.text and list(answer.json()) == ["detail"], path
    assert campaigns(site) == 0
    with TestClient(site.app, raise_server_exceptions=False) as client:
        login(client, site, "mgr")
        for page in HOSTILE_PAGES:
            answer = client.get(page)
            assert 400 <= answer.status_code < 500, (page, answer.status_code, answer.text[:300])
            assert "Traceback" not in answer.text
            assert "default-src 'self'" in answer.headers["content-security-policy"]


HOSTILE_PAGES = [
    "/campaigns/%00",
    "/campaigns/cmp-0123456789abcdef",
    "/review/seat?id=cmp-%00.1/cmp-%00/campaign/expert/1",
    "/review/seat?id=cmp-0123456789abcdef.1/cmp-0123456789abcdef/campaign/expert/1",
    "/review/material?seat=cmp-0123456789abcdef.1/cmp-0123456789abcdef/campaign/expert/1&uri=x",
    "/reports/review?reference=%00",
]
