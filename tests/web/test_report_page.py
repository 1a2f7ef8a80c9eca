"""The review report on the service, over httpx (in-process), on SQLite and PostgreSQL: the
page's tables and charts print exactly the numbers of ``assay review report --json`` (the real
CLI, run on the same store), ``/v1/reports/review`` is that same document, only managers see
either, a bad protocol names its field, and an empty ledger gives a page that says so."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient

from assay import Config
from assay.ledger import Ledger
from assay.platform import Platform
from assay.platform._campaigns import protocol_id
from assay.service import Settings, create_app
from tests.platform.conftest import Clock, cli
from tests.review.helpers import escalation, publish, users
from tests.review16.helpers import expert, parsed
from tests.review16.test_report import CLAUDE, PANELS, REFERENCE, _claim_respond, _open
from tests.web.test_pages import csrf_of

MANAGERS = ("author", "other")
"""``author`` publishes the problem (and audits it); ``other`` manages nothing."""


@dataclass
class Reviewed:
    """A store where the escalation protocol reviewed four runs and a single expert audited
    them in a campaign; tokens of its users; the two protocols' ids."""

    config: Config
    app: FastAPI
    tokens: dict[str, str]
    escalation: str
    expert: str

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


def reviewed(db: str, tmp_path: Path, review: bool = True) -> Reviewed:
    """The report test's ledger (tests/review16/test_report.py), on a clock two days back so
    the service's own wall clock comes after every entry."""
    config = Config(db=db, blobs=str(tmp_path / "blobs"))
    clock = Clock(datetime.now(UTC).replace(microsecond=0) - timedelta(days=2))
    tokens: dict[str, str] = {}
    with Platform(Ledger.open(config), config, clock=clock) as platform:
        for name in MANAGERS:
            tokens[name] = str(platform.reviews.add_user(name, [], "admin", ["manager"]).token)
        tokens["rev1"] = str(
            platform.reviews.add_user("rev1", ["reviewers"], "admin", ["reviewer"]).token
        )
        if review:
            _review(platform, clock, tmp_path)
    app = create_app(Settings(config=config))
    return Reviewed(
        config, app, tokens, protocol_id(parsed(escalation())), protocol_id(parsed(expert()))
    )


def _review(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    publish(
        platform, tmp_path, escalation(), policy={"allowance": {"count": 50, "window_hours": 24}}
    )
    users(platform, experts=2)
    submissions = []
    for i, panel in enumerate(PANELS):
        run = platform.submit("reviewed", {}, "42", f"p{i}")
        submissions.append(run.submission)
        for n, verdict in enumerate(panel, 1):
            seat = _open(platform, f"rev{n}", run.submission, "panel")
            if n == 1:
                _claim_respond(platform, clock, seat, "rev1", verdict, 15, assistance=CLAUDE)
            else:
                _claim_respond(platform, clock, seat, f"rev{n}", verdict, 30)
    seat = _open(platform, "exp1", submissions[2], "expert")
    _claim_respond(platform, clock, seat, "exp1", "pass", 30)
    audit = platform.reviews.campaigns.create(
        parsed(expert()), "runs:problem=reviewed,status=any", "author"
    )
    for item in audit.items:
        seat = _open(platform, "exp2", item.item, "expert")
        _claim_respond(platform, clock, seat, "exp2", REFERENCE[submissions.index(item.target)], 20)


class Tables(HTMLParser):
    """Every table's rows (cell texts) by the table's id, and the page's SVG charts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.svgs: list[dict[str, Any]] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._svg: dict[str, Any] | None = None
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table":
            self._table = found.get("id") or f"table{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "svg":
            self._svg = {"attrs": found, "title": "", "desc": "", "circles": 0, "rows": []}
            self.svgs.append(self._svg)
        elif self._svg is not None and tag in ("title", "desc"):
            self._in = tag
        elif self._svg is not None and tag == "circle":
            self._svg["circles"] += 1
        elif self._svg is not None and tag == "g":
            self._svg["rows"].append(found.get("data-label"))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "svg":
            self._svg = None
        elif tag in ("title", "desc"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._svg is not None and self._in is not None:
            self._svg[self._in] += data


def parse(html: str) -> Tables:
    found = Tables()
    found.feed(html)
    return found


def f3(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def rate(r: dict[str, Any] | None) -> str:
    """The CLI JSON's rate as the page must print it."""
    if r is None:
        return "-"
    if r["n"] == 0:
        return "0 of 0 (no estimate)"
    return f"{f3(r['rate'])} [{f3(r['low'])}, {f3(r['high'])}] ({r['k']}/{r['n']})"


def kappa(k: dict[str, Any] | None) -> str:
    if k is None:
        return "-"
    if k["value"] is None:
        return f"{k['method']}: undefined ({k['note']})"
    interval = f" [{f3(k['low'])}, {f3(k['high'])}]" if k["low"] is not None else ""
    return f"{k['method']} {f3(k['value'])}{interval}"


def per_hour(d: dict[str, Any]) -> str:
    counted = f"({d['count']} in {d['hours']:.3f} h)"
    if d["rate"] is None:
        return f"no time recorded {counted}"
    return f"{f3(d['rate'])} [{f3(d['low'])}, {f3(d['high'])}] per hour {counted}"


def login(client: TestClient, tokens: dict[str, str], user: str) -> str:
    """Log ``user`` in on the pages; the page's CSRF token."""
    form = client.get("/login")
    answer = client.post(
        "/login",
        data={"csrf": csrf_of(form.text), "token": tokens[user], "next": "/problems"},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    return csrf_of(client.get("/problems").text)


@pytest.mark.slow  # the scenario (~40 claims and responses) and a real CLI process: ~20 s
def test_the_page_and_the_api_print_the_cli_s_numbers(db_url: str, tmp_path: Path) -> None:
    site = reviewed(db_url, tmp_path)
    try:
        done = cli(
            "review", "report", "--reference", site.expert[:12], "--json", db=db_url, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        with TestClient(site.app, raise_server_exceptions=False) as client:
            query = {"reference": site.expert[:12]}
            answer = client.get("/v1/reports/review", params=query, headers=site.auth("other"))
            assert answer.status_code == 200, answer.text
            assert answer.json() == document  # one builder: the CLI's document, byte for byte
            login(client, site.tokens, "author")
            page = client.get("/reports/review", params=query)
        assert page.status_code == 200, page.text
        assert page.headers["content-security-policy"].startswith("default-src 'self'")
        assert "<script" not in page.text
        found = parse(page.text)
        protocols = {p["protocol"]: p for p in document["protocols"]}
        assert set(protocols) == {site.escalation, site.expert}
        esc = protocols[site.escalation]
        assert esc["outcomes"] == {"accept": 3, "reject": 1}  # the ledger's numbers, not the page's

        expected = []
        for p in document["protocols"]:
            outcomes = ", ".join(f"{k} {v}" for k, v in p["outcomes"].items()) or "-"
            expected.append(
                [
                    p["protocol"][:12],
                    p["title"] or "untitled",
                    f"{p['concluded']}/{p['units']}",
                    outcomes,
                    rate(p["matches_reference"]),
                    rate(p["automated_disagreement"]),
                ]
            )
        assert found.tables["protocols"][1:] == expected
        assert found.tables["agreement"][1:] == [
            [
                p["protocol"][:12],
                a["node"],
                str(a["seats"]),
                str(a["items"]),
                rate(a["raw"]),
                kappa(a["kappa"]),
            ]
            for p in document["protocols"]
            for a in p["agreement"]
        ]
        assert found.tables["speed"][1:] == [
            [
                p["protocol"][:12],
                t["assistance"],
                str(t["reviewers"]),
                per_hour(t["decisions"]),
                rate(t["agrees_with_decision"]),
            ]
            for p in document["protocols"]
            for t in p["throughput"]
        ]
        # the numbers this scenario was built to give, as the page prints them
        assert "0.750" in rate(esc["matches_reference"]) and "(3/4)" in rate(
            esc["matches_reference"]
        )
        speeds = {
            row[1]: row[3] for row in found.tables["speed"][1:] if row[0] == site.escalation[:12]
        }
        assert (
            speeds["assisted: claude"].startswith("4.000 [")
            and "(4 in 1.000 h)" in speeds["assisted: claude"]
        )
        assert "(9 in 4.500 h)" in speeds["unassisted"]

        # three charts, each titled and described, with a dot per estimate and its numbers
        assert [s["attrs"]["aria-labelledby"] for s in found.svgs] == [
            "chart-rates-title chart-rates-desc",
            "chart-kappa-title chart-kappa-desc",
            "chart-hours-title chart-hours-desc",
        ]
        rates, kappas, hours = found.svgs
        assert all(s["attrs"]["role"] == "img" and s["title"] and s["desc"] for s in found.svgs)
        assert (
            len(hours["rows"])
            == hours["circles"]
            == sum(len(p["throughput"]) for p in document["protocols"])
        )
        assert len(kappas["rows"]) == sum(len(p["agreement"]) for p in document["protocols"])
        rate_rows = found.tables["rates"][1:]
        assert len(rates["rows"]) == rates["circles"] == len(rate_rows)
        assert [
            f"{esc['title'] or esc['protocol'][:12]} · matches the reference",
            rate(esc["matches_reference"]),
        ] in rate_rows
        for label, text in rate_rows:  # the chart's description says each row's numbers
            assert f"{label}: {text}." in " ".join(rates["desc"].split())
        for t in esc["throughput"]:
            assert per_hour(t["decisions"]) in hours["desc"]
    finally:
        site.app.state.web.close()


def test_only_managers_see_the_report_and_a_bad_protocol_names_its_field(tmp_path: Path) -> None:
    site = reviewed(f"sqlite:///{tmp_path / 'assay.db'}", tmp_path, review=False)
    try:
        with TestClient(site.app, raise_server_exceptions=False) as client:
            assert client.get("/v1/reports/review").status_code == 401
            refused = client.get("/v1/reports/review", headers=site.auth("rev1"))
            assert refused.status_code == 403 and "manager" in refused.json()["detail"]
            page = client.get("/reports/review", follow_redirects=False)
            assert page.status_code == 303 and page.headers["location"].startswith("/login?next=")
            bad = client.get(
                "/v1/reports/review", params={"protocol": "ffffffff"}, headers=site.auth("author")
            )
            assert bad.status_code == 422
            assert bad.json()["detail"].startswith(
                "protocol: 'ffffffff' names no reviewed protocol"
            )
            bad = client.get(
                "/v1/reports/review", params={"reference": "nope-nope"}, headers=site.auth("author")
            )
            assert bad.status_code == 422 and bad.json()["detail"].startswith("reference: ")
            login(client, site.tokens, "rev1")
            assert client.get("/reports/review").status_code == 403
        with TestClient(site.app, raise_server_exceptions=False) as client:
            login(client, site.tokens, "author")
            bad_page = client.get("/reports/review", params={"protocol": "ffffffff"})
            assert (
                bad_page.status_code == 422
                and "protocol: &#39;ffffffff&#39; names no" in bad_page.text
            )
    finally:
        site.app.state.web.close()


def test_an_empty_ledger_gives_a_page_that_says_so(tmp_path: Path) -> None:
    site = reviewed(f"sqlite:///{tmp_path / 'assay.db'}", tmp_path, review=False)
    try:
        with TestClient(site.app, raise_server_exceptions=False) as client:
            answer = client.get("/v1/reports/review", headers=site.auth("author"))
            assert answer.status_code == 200 and answer.json()["protocols"] == []
            assert answer.json()["schema"] == "assay.review_report/1"
            login(client, site.tokens, "author")
            page = client.get("/reports/review")
        assert page.status_code == 200
        assert re.search(r'id="empty"[^>]*>No review has been recorded yet', page.text)
        assert "<svg" not in page.text
        found = parse(page.text)
        assert "protocols" not in found.tables
    finally:
        site.app.state.web.close()


def test_a_chart_escapes_its_text_and_draws_only_what_has_an_estimate() -> None:
    from assay.web._svg import Point, interval_chart, ticks

    hostile = 'protocol "<script>alert(1)</script>" & co'
    svg = str(
        interval_chart(
            "c",
            "T <b>",
            "D &",
            [
                Point(hostile, 0.5, 0.25, 2.0, "0.500 [0.250, 2.000]"),
                Point("undefined", None, None, None, "fleiss: undefined (one category)"),
            ],
            0.0,
            1.0,
        )
    )
    assert "<script>" not in svg and "<b>" not in svg and "&lt;script&gt;" in svg
    assert "style=" not in svg  # the pages' CSP forbids inline styles
    assert svg.count("<circle") == 1  # no dot where there is no estimate
    assert 'x2="506' in svg  # an interval past the axis is clipped to its end
    assert "0.500 [0.250, 2.000]" in svg and "fleiss: undefined (one category)" in svg
    assert ticks(0.0, 1.0) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ticks(-1.0, 1.0) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert ticks(0.0, 11.0)[-1] == 10.0
