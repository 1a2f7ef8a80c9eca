"""A rule stage's evidence supplied over the web (``POST /v1/submissions/ID/external`` and the
page ``/submissions/ID/external/STAGE``) read otherwise than ``assay external record`` reads
it, and what a bind's refutation tells the supplier (helper "adv-binds").

The CLI and the page hand the evidence's text to the rule, which refuses anything that is not
strict JSON (duplicate keys, NaN, numbers beyond the float range). Found and fixed: the API
took the evidence as a member of its JSON body parsed by plain ``json.loads``, so a duplicate
key was settled silently (the last one winning) before the rule saw it (the body is now read
strictly); a bind that did not hold quoted the entry's value, and the API answered a supplier
who may not see the submission (independent entry) with the participant's view of the run
(evidence about other work is now refused quoting only the evidence, and such a supplier is
answered with the stage it concluded alone); a lone surrogate quoted raw into a stage's detail
made the submission's page answer 500 (quotes are ASCII now)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from hashlib import sha256

import pytest
from starlette.testclient import TestClient

from assay import Config
from assay.platform import Platform
from assay.service import Settings, create_app
from tests.adversarial.web_attacks import login
from tests.platform.conftest import make_problem, rule_contract
from tests.web.conftest import Site

SECRET = "bob-private-image-5d1e"
"""The entry's value on the private problem: nobody but bob and the managers may read it
before the cutoff."""


AT_IMAGE = [{"evidence": "/image", "role": "entry", "at": "/image"}]
PRIVATE = {"independent_entry": {"cutoff": "2099-01-01T00:00:00Z"}}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("evidence-web")
    config = Config(db=f"sqlite:///{root / 'assay.db'}", blobs=str(root / "blobs"))
    tokens: dict[str, str] = {}
    with Platform.open(config) as platform:
        folders = root / "folders"
        platform.publish(
            make_problem(folders, problem="open", contract=rule_contract(AT_IMAGE)), "mgr"
        )
        for name, binds in (
            ("private", AT_IMAGE),
            ("private-sha", [{"evidence": "/d", "role": "entry"}]),
        ):
            folder = make_problem(
                folders, problem=name, contract=rule_contract(binds), policy=PRIVATE
            )
            platform.publish(folder, "mgr")
        for name, roles in (("operator", []), ("bob", ["participant"]), ("mgr", ["manager"])):
            token = platform.reviews.add_user(name, [], "admin", roles).token
            assert token is not None
            tokens[name] = token
    found = Site(config=config, app=create_app(Settings(config=config)), tokens=tokens)
    yield found
    found.app.state.web.close()


@pytest.fixture
def client(site: Site) -> Iterator[TestClient]:
    with TestClient(site.app, raise_server_exceptions=False) as fresh:
        yield fresh


def _submit(client: TestClient, site: Site, problem: str, entry: bytes) -> str:
    answer = client.post(
        f"/v1/problems/{problem}/submissions",
        headers=site.auth("bob"),
        files={"entry": ("entry.json", entry)},
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["submission"])


def _post(client: TestClient, site: Site, submission: str, body: bytes) -> tuple[int, str]:
    answer = client.post(
        f"/v1/submissions/{submission}/external",
        headers={**site.auth("operator"), "Content-Type": "application/json"},
        content=body,
    )
    return answer.status_code, answer.text


def _recorded(site: Site, submission: str) -> int:
    with Platform.open(site.config) as platform:
        return len(platform.ledger.find(kind="external.recorded", subject=submission))


@pytest.mark.parametrize(
    "evidence",
    [
        pytest.param(b'{"image": "other", "image": "mine"}', id="duplicate"),
        pytest.param(b'{"image": "other", "im\\u0061ge": "mine"}', id="escaped-duplicate"),
    ],
)
def test_evidence_with_a_duplicate_key_is_refused_over_the_api(
    client: TestClient, site: Site, evidence: bytes
) -> None:
    submission = _submit(client, site, "open", b'{"image": "mine"}')
    code, text = _post(client, site, submission, b'{"stage": "bench", "evidence": %s}' % evidence)
    assert 400 <= code < 500, text
    assert _recorded(site, submission) == 0


@pytest.mark.parametrize(
    "evidence",
    [
        pytest.param(b'{"image": "mine", "n": NaN}', id="nan"),
        pytest.param(b'{"image": "mine", "n": 1e400}', id="beyond-float"),
        pytest.param(b'{"image": "mine", "n": -Infinity}', id="minus-infinity"),
        pytest.param(b'{"image": "mine", "n": %s}' % (b"9" * 5000), id="int-5000-digits"),
    ],
)
def test_evidence_beyond_strict_json_is_refused_over_the_api(
    client: TestClient, site: Site, evidence: bytes
) -> None:
    submission = _submit(client, site, "open", b'{"image": "mine"}')
    code, text = _post(client, site, submission, b'{"stage": "bench", "evidence": %s}' % evidence)
    assert 400 <= code < 500, text
    assert _recorded(site, submission) == 0
    code, text = _post(
        client, site, submission, b'{"stage": "bench", "evidence": {"image": "mine"}}'
    )
    assert code == 200 and json.loads(text)["status"] == "verified", text


@pytest.mark.parametrize(
    "evidence",
    [
        pytest.param('{"image": "other", "image": "mine"}', id="duplicate"),
        pytest.param('{"image": "other", "im\\u0061ge": "mine"}', id="escaped-duplicate"),
        pytest.param('\ufeff{"image": "mine"}', id="bom"),
        pytest.param('{"image": "mine"} {"image": "other"}', id="two-documents"),
    ],
)
def test_evidence_that_is_not_strict_json_is_refused_on_the_page(
    client: TestClient, site: Site, evidence: str
) -> None:
    submission = _submit(client, site, "open", b'{"image": "mine"}')
    csrf = login(client, site, "operator")
    answer = client.post(
        f"/submissions/{submission}/external/bench",
        data={"csrf": csrf, "evidence": evidence},
        follow_redirects=False,
    )
    assert answer.status_code == 422, answer.text[:500]
    assert "not strict JSON" in answer.text
    assert _recorded(site, submission) == 0


def test_the_page_shows_a_supplier_no_private_entry(client: TestClient, site: Site) -> None:
    submission = _submit(client, site, "private", json.dumps({"image": SECRET}).encode())
    csrf = login(client, site, "operator")
    answer = client.post(
        f"/submissions/{submission}/external/bench",
        data={"csrf": csrf, "evidence": '{"image": "probe"}'},
        follow_redirects=False,
    )
    assert answer.status_code == 422 and _recorded(site, submission) == 0, answer.text[:500]
    assert "about other work" in answer.text and SECRET not in answer.text


@pytest.mark.parametrize(
    ("problem", "evidence"),
    [
        pytest.param("private", b'{"image": "probe"}', id="value-at-a-pointer"),
        pytest.param("private-sha", b'{"d": "probe"}', id="sha256"),
    ],
)
def test_the_api_shows_a_supplier_no_private_entry(
    client: TestClient, site: Site, problem: str, evidence: bytes
) -> None:
    entry = json.dumps({"image": SECRET, "problem": problem}).encode()
    submission = _submit(client, site, problem, entry)
    assert (
        client.get(f"/v1/submissions/{submission}", headers=site.auth("operator")).status_code
        == 404
    )
    code, text = _post(client, site, submission, b'{"stage": "bench", "evidence": %s}' % evidence)
    assert code == 422 and _recorded(site, submission) == 0, text  # about other work
    assert SECRET not in text and sha256(entry).hexdigest() not in text, text


def test_the_api_answers_a_supplier_who_may_not_see_the_run_with_the_stage_alone(
    client: TestClient, site: Site
) -> None:
    entry = json.dumps({"image": SECRET, "problem": "private-sha"}).encode()
    submission = _submit(client, site, "private-sha", entry)
    evidence = json.dumps({"d": sha256(entry).hexdigest()}).encode()
    code, text = _post(client, site, submission, b'{"stage": "bench", "evidence": %s}' % evidence)
    assert code == 200 and _recorded(site, submission) == 1, text
    answer = json.loads(text)
    assert answer["schema"] == "assay.external-recorded/1" and answer["status"] == "verified"
    assert set(answer) == {"schema", "submission", "stage", "status", "detail"}
    assert SECRET not in text


@pytest.mark.parametrize(
    ("entry", "evidence"),
    [
        pytest.param(b'{"image": "\\ud800"}', b'{"image": "x"}', id="in-the-entry"),
        pytest.param(b'{"image": "x"}', b'{"image": "\\udc00"}', id="in-the-evidence"),
    ],
)
def test_a_lone_surrogate_in_a_quoted_value_leaves_the_page_readable(
    client: TestClient, site: Site, entry: bytes, evidence: bytes
) -> None:
    submission = _submit(client, site, "open", entry)
    code, text = _post(client, site, submission, b'{"stage": "bench", "evidence": %s}' % evidence)
    assert code == 422 and "about other work" in json.loads(text)["detail"], text
    code, text = _post(client, site, submission, b'{"stage": "bench", "evidence": %s}' % entry)
    assert code == 200 and json.loads(text)["status"] == "verified", text  # the same surrogate
    for viewer in ("bob", "mgr"):
        login(client, site, viewer)
        page = client.get(f"/submissions/{submission}")
        assert page.status_code == 200 and "Verified" in page.text, page.text[:300]
