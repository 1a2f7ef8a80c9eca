"""The external-evidence page: the party a party stage names records its word, and a supplier
a rule stage names pastes the evidence; CSRF-protected, each refusal shown beside its field,
nothing recorded until it is accepted, and nobody else is even shown the form."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from assay.platform import Platform
from tests.web.conftest import EXAMPLES, Site
from tests.web.test_api import submit
from tests.web.test_pages import csrf_of, login

PARTY = EXAMPLES / "external-party"
BENCH = EXAMPLES / "external-benchmark"


def recorded(site: Site) -> list[dict]:
    with Platform.open(site.config) as platform:
        return [e.body for e in platform.ledger.find(kind="external.recorded")]


def add(site: Site, name: str, *problems: str) -> None:
    with Platform.open(site.config) as platform:
        for folder in problems:
            platform.publish(EXAMPLES / folder, "mgr")
        site.tokens[name] = platform.reviews.add_user(name, ["labs"], "admin").token or ""


def test_the_named_party_records_its_word_through_the_form(api: TestClient, site: Site) -> None:
    add(site, "replication-lab", "external-party")
    protocol = (PARTY / "submissions" / "good" / "protocol.md").read_bytes()
    sid = submit(api, site, "alice", "external-party", {"protocol": protocol})["submission"]
    url = f"/submissions/{sid}/external/replication"

    for user in ("alice", "mgr", "bob"):  # the participant, a manager, anyone else: no form
        login(api, site, user)
        assert "/external/" not in api.get(f"/submissions/{sid}").text
        refused = api.get(url)
        assert refused.status_code == 404 and 'name="result"' not in refused.text
    csrf = login(api, site, "replication-lab")
    page = api.get(f"/submissions/{sid}")
    assert f'href="{url}"' in page.text
    form = api.get(url)
    assert form.status_code == 200 and "Record your conclusion" in form.text
    assert "Did not satisfy the verifier" in form.text  # design.md's labels on the choices

    assert (
        api.post(url, data={"csrf": "0" * 64, "result": "verified", "reason": "r"}).status_code
        == 403
    )
    missing = api.post(url, data={"csrf": csrf, "reason": "  "})
    assert missing.status_code == 422
    assert re.search(r'id="err-result"[^>]*>Choose', missing.text)
    assert re.search(r'id="err-reason"[^>]*>Give the reason', missing.text)
    assert 'aria-describedby="err-reason"' in missing.text
    wrong = api.post(url, data={"csrf": csrf, "result": "error", "reason": "x"})
    assert wrong.status_code == 422 and 'id="err-result"' in wrong.text
    assert recorded(site) == []

    done = api.post(
        url,
        data={"csrf": csrf, "result": "verified", "reason": "reproduced\r\nwithin 2%"},
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"] == f"/submissions/{sid}"
    [entry] = recorded(site)
    assert entry["by"] == "replication-lab" and entry["reason"] == "reproduced\nwithin 2%"
    assert entry["status"] == "verified"
    login(api, site, "alice")
    assert 'id="verdict">Verified<' in api.get(f"/submissions/{sid}").text
    login(api, site, "replication-lab")
    twice = api.post(
        url, data={"csrf": csrf_of(api.get(url).text), "result": "refuted", "reason": "r"}
    )
    assert twice.status_code == 422 and "no run of" in twice.text and len(recorded(site)) == 1


def test_a_supplier_pastes_a_rule_stage_s_evidence(api: TestClient, site: Site) -> None:
    add(site, "operator", "external-benchmark")
    good = BENCH / "submissions" / "good"
    sid = submit(
        api, site, "alice", "external-benchmark", {"entry": (good / "entry.json").read_bytes()}
    )["submission"]
    url = f"/submissions/{sid}/external/benchmark"
    csrf = login(api, site, "operator")
    form = api.get(url)
    assert form.status_code == 200 and "Record the evidence" in form.text
    assert "tokens_per_second" in form.text  # the rule is shown
    assert "must be about this submission" in form.text and "<code>/image</code>" in form.text
    page = api.get("/problems/external-benchmark").text
    assert "about this submission (<code>/image</code> = <code>/image</code> of the entry)" in page
    empty = api.post(url, data={"csrf": csrf, "evidence": ""})
    assert empty.status_code == 422 and re.search(r'id="err-evidence"[^>]*>Paste', empty.text)
    loose = api.post(url, data={"csrf": csrf, "evidence": '{"tokens_per_second": NaN}'})
    assert loose.status_code == 422
    assert re.search(r'id="err-evidence"[^>]*>the evidence is not strict JSON', loose.text)
    assert "NaN" in loose.text  # what was pasted stays in the field
    assert recorded(site) == []
    report = (good / "report.json").read_text()
    done = api.post(url, data={"csrf": csrf, "evidence": report}, follow_redirects=False)
    assert done.status_code == 303
    [entry] = recorded(site)
    assert entry["by"] == "operator" and entry["status"] == "verified"
    assert entry["evidence_sha256"]
