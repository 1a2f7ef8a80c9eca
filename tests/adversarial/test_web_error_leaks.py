"""Leaks through errors, headers and the OpenAPI docs (helper "adv-web"): hostile requests to
the people's API and pages answer a clean status and ``{"detail": ...}`` (never a 500, a
traceback, the store's path or a token); the OpenAPI document lists only the API; the API docs
page must not run another origin's script on the origin whose pages hold the sessions."""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.adversarial.web_attacks import api, login, site
from tests.web.conftest import Site

__all__ = ["api", "site"]

HOSTILE: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/v1/problems/%00", {}),
    ("GET", "/v1/problems/..%2F..%2Fetc", {}),
    ("GET", "/v1/problems/sat-small/skills/../../../etc/passwd", {}),
    ("GET", "/v1/problems/sat-small/references/%2E%2E", {}),
    ("GET", "/v1/submissions/" + "s" * 5000, {}),
    ("GET", "/v1/seats/a/b/c/d/e/material?uri=file:///etc/passwd", {}),
    ("GET", "/v1/seats/x/material", {}),
    ("POST", "/v1/seats/s-0/r-0/review/panel/1/claim", {}),
    ("POST", "/v1/seats/junk/respond", {"content": b"\xff\xfe\x00"}),
    ("POST", "/v1/seats/junk/respond", {"content": b'{"verdict": NaN}'}),
    ("POST", "/v1/revocations", {"content": b"[]"}),
    ("POST", "/v1/revocations", {"content": b"{" * 10000}),
    ("POST", "/v1/revocations", {"json": {"checker": "x" * 100000, "why": "w"}}),
    ("POST", "/v1/submissions/s-0/external", {"json": {"stage": 1}}),
    ("POST", "/v1/submissions/s-0/external", {"content": b'{"stage": "x", "evidence": NaN}'}),
    (
        "POST",
        "/v1/problems/sat-small/submissions",
        {"content": b"--x\r\n", "headers": {"content-type": "multipart/form-data; boundary=x"}},
    ),
    (
        "POST",
        "/v1/problems/sat-small/submissions",
        {"content": b"", "headers": {"content-type": "multipart/form-data"}},
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "kw"), HOSTILE, ids=[f"{m} {p[:50]}" for m, p, _ in HOSTILE]
)
def test_hostile_api_requests_get_a_clean_refusal(
    api: TestClient, site: Site, method: str, path: str, kw: dict[str, Any]
) -> None:
    headers = {**site.auth("mgr"), **kw.pop("headers", {})}
    answer = api.request(method, path, headers=headers, **kw)
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:300])
    text = answer.text
    assert "Traceback" not in text and 'File "' not in text
    assert str(site.config.db).split("///")[-1] not in text
    assert not any(token in text for token in site.tokens.values())


@pytest.mark.parametrize(
    "path",
    [
        "/review/seat?id=s-0/r-0/review/panel/1",
        "/review/material?seat=x&uri=y",
        "/submissions/%00",
        "/problems/nope",
        "/problems/sat-small/references/held-out",
    ],
)
def test_hostile_page_requests_get_a_clean_refusal(site: Site, path: str) -> None:
    with TestClient(site.app, raise_server_exceptions=False) as client:
        login(client, site, "rev1")
        answer = client.get(path)
        assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:300])
        assert "Traceback" not in answer.text
        assert answer.headers["cache-control"] == "no-store"
        assert "default-src 'self'" in answer.headers["content-security-policy"]


def test_the_openapi_document_lists_only_the_api(api: TestClient, site: Site) -> None:
    document = api.get("/openapi.json")
    assert document.status_code == 200
    paths = set(document.json()["paths"])
    for page in ("/login", "/logout", "/manage", "/review", "/problems", "/manage/revoke"):
        assert page not in paths
    text = document.text
    assert str(site.config.db).split("///")[-1] not in text
    assert not any(token in text for token in site.tokens.values())


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_api_docs_run_no_script_from_another_origin(api: TestClient, path: str) -> None:
    answer = api.get(path)
    if answer.status_code == 404:
        return
    foreign = re.findall(r'(?:src|href)\s*=\s*["\']((?:https?:)?//[^"\']+)', answer.text)
    assert not foreign, foreign
