"""Campaigns over HTTP (``/v1/campaigns``, the seat API, ``/v1/reports/review``), in-process:
a refusal must be a clean 4xx naming the field, never a 500 and never the server's own paths;
a reviewer's seat is theirs alone through the API as through the platform.

Found: an uploaded item larger than the store's cap (``max_staged_mb``) was refused with the
blob store's message, whose ``where`` is the upload's temporary path on the server
(``items: /tmp/assay-campaign-…/uploaded/big.md: is larger than …``). Fixed in
src/assay/web/_campaigns.py: the refusal names the uploaded file, never the server path.
Regression guards (held, or fixed with the platform findings): a withdrawn artifact's material
over the seat API is a 404 (it was a 500 from ``BlobMissing``), another reviewer's seat cannot
be answered or read over the API, and an odd report query is a 422."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay import Config
from assay.platform import Platform
from assay.review import load_yaml, parse_protocol
from assay.service import Settings, create_app
from tests.adversarial.campaign_attacks import audited, submit

EXPERT = (
    Path(__file__).resolve().parents[2] / "examples" / "review" / "single-expert.yaml"
).read_text()


class Site:
    def __init__(self, root: Path) -> None:
        self.config = Config(
            db=f"sqlite:///{root / 'assay.db'}", blobs=str(root / "blobs"), max_staged_mb=1
        )
        self.tokens: dict[str, str] = {}
        with Platform.open(self.config) as platform:
            audited(platform, root, manager="mgr")
            self.run = submit(platform, root, "audited", "alice")
            for name, roles, groups in (
                ("mgr", ["manager"], []),
                ("erin", ["reviewer"], ["experts"]),
                ("fred", ["reviewer"], ["experts"]),
            ):
                token = platform.reviews.add_user(name, groups, "admin", roles).token
                assert token is not None
                self.tokens[name] = token
        self.app = create_app(Settings(config=self.config, max_body_bytes=8 * 1024 * 1024))

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Site, TestClient]]:
    found = Site(tmp_path)
    with TestClient(found.app, raise_server_exceptions=False) as client:
        yield found, client
    found.app.state.web.close()


def _clean(answer: object, tmp_path: Path) -> None:
    text = answer.text  # type: ignore[attr-defined]
    assert 400 <= answer.status_code < 500, text  # type: ignore[attr-defined]
    assert "Traceback" not in text and str(tmp_path) not in text
    assert "/tmp/" not in text and "assay-campaign-" not in text


def test_an_oversized_upload_is_refused_naming_the_file_not_the_server_path(
    site: tuple[Site, TestClient], tmp_path: Path
) -> None:
    found, client = site
    answer = client.post(
        "/v1/campaigns",
        headers=found.auth("mgr"),
        data={"protocol": EXPERT},
        files=[("item", ("big.md", b"x" * (1024 * 1024 + 1)))],
    )
    _clean(answer, tmp_path)
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert detail.startswith("items: ") and "'big.md'" in detail and "larger than" in detail


def test_a_withdrawn_artifact_over_the_seat_api_is_a_404(
    site: tuple[Site, TestClient], tmp_path: Path
) -> None:
    found, client = site
    opened = client.post(
        "/v1/campaigns",
        headers=found.auth("mgr"),
        json={"protocol": EXPERT, "items": "runs:problem=audited"},
    )
    assert opened.status_code == 201, opened.text
    (seat,) = [
        s["seat"] for s in client.get("/v1/seats", headers=found.auth("erin")).json()["open"]
    ]
    claimed = client.post(f"/v1/seats/{seat}/claim", headers=found.auth("erin"))
    assert claimed.status_code == 200, claimed.text
    uri = next(m["uri"] for m in claimed.json()["materials"] if "/artifact/" in m["uri"])
    read = client.get(f"/v1/seats/{seat}/material", params={"uri": uri}, headers=found.auth("erin"))
    assert read.status_code == 200 and read.content == b"alice's private work"
    for other in ("fred", "mgr"):  # not their seat: nothing, however asked
        refused = client.get(
            f"/v1/seats/{seat}/material", params={"uri": uri}, headers=found.auth(other)
        )
        assert refused.status_code in (403, 404) and b"alice" not in refused.content
    response = {
        "verdict": "pass",
        "rationale": "r",
        "citations": [uri],
        "confidence": 1,
        "assistance": [],
    }
    stolen = client.post(
        f"/v1/seats/{seat}/respond", headers=found.auth("fred"), content=json.dumps(response)
    )
    _clean(stolen, tmp_path)
    with Platform.open(found.config) as platform:
        platform.withdraw(found.run.submission, "doc", "alice")
    gone = client.get(f"/v1/seats/{seat}/material", params={"uri": uri}, headers=found.auth("erin"))
    _clean(gone, tmp_path)
    assert gone.status_code == 404
    late = client.post(
        f"/v1/seats/{seat}/respond", headers=found.auth("erin"), content=json.dumps(response)
    )
    _clean(late, tmp_path)
    cid = opened.json()["campaign"]
    item = client.get(f"/v1/campaigns/{cid}", headers=found.auth("mgr")).json()["items"][0]
    assert (item["decision"], item["status"]) == ("unresolved", "inconclusive")


@pytest.mark.parametrize(
    "params",
    [
        {"protocol": "x" * 5000},
        {"protocol": "\x00"},
        {"protocol": ["a", "b", "c"]},
    ],
)
def test_an_odd_report_query_is_a_clean_refusal(
    site: tuple[Site, TestClient], tmp_path: Path, params: dict[str, object]
) -> None:
    found, client = site
    answer = client.get("/v1/reports/review", params=params, headers=found.auth("mgr"))  # type: ignore[arg-type]
    _clean(answer, tmp_path)


def test_a_campaign_opened_from_a_server_folder_lists_no_server_path(
    site: tuple[Site, TestClient], tmp_path: Path
) -> None:
    """The CLI opens a campaign over a folder on the server; every manager lists it."""
    found, client = site
    folder = tmp_path / "private" / "drafts"
    folder.mkdir(parents=True)
    (folder / "one.md").write_text("one")
    with Platform.open(found.config) as platform:
        view = platform.reviews.campaigns.create(
            parse_protocol(load_yaml(EXPERT.encode(), "p"), "p"), str(folder), "boss"
        )
    assert view.source == "drafts"
    listed = client.get("/v1/campaigns", headers=found.auth("mgr"))
    assert listed.status_code == 200 and str(tmp_path) not in listed.text
    assert [c["source"] for c in listed.json()["campaigns"]] == ["drafts"]
