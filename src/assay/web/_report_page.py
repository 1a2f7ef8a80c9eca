"""The review report on the service: ``GET /reports/review`` (a page with plots, for people who
would rather look than read) and ``GET /v1/reports/review`` (its JSON). Both are one call of
``assay.platform.review_report``, the builder ``assay review report --json`` prints, so the
page, the API and the CLI cannot disagree: the page only draws and prints that document.

Who may see it: users with the ``manager`` role, the rule the pages already apply to
``/manage`` and the API to re-checks and revocations. The report holds aggregates only
(protocol ids and titles, counts, rates, kappas, reviewer-hours): no submission, item,
reviewer name or response.

Also here, because the campaign routes (``assay.web._campaigns``) need them too: who a page's
or an API request's user is, and rendering a page with the site's layout.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, Response

from assay._errors import InvalidInput
from assay.platform import review_report
from assay.review import ReviewReport
from assay.web._access import Web
from assay.web._api import _json, api_user
from assay.web._identity import SESSION_COOKIE, csrf_for
from assay.web._pages import HEADERS, PageError, _environment, page_user
from assay.web._svg import Point, interval_chart

FIELDS = {"--protocol": "protocol", "--reference": "reference"}
"""The CLI's option names in the builder's refusals, as the query's field names."""


def field_message(exc: InvalidInput, fields: dict[str, str]) -> str:
    """A refusal naming the request's field (``protocol``) where the CLI names its option."""
    text = str(exc)
    if exc.where in fields:
        return fields[exc.where] + text.removeprefix(exc.where)
    return text


class Pages:
    """Renders templates with the site's layout (its user, roles, CSRF token, headers)."""

    def __init__(self, web: Web) -> None:
        self.web = web
        self.env = _environment()
        self.env.filters["rate"] = rate_text
        self.env.filters["kappa"] = kappa_text
        self.env.filters["hour"] = hour_text

    def render(self, request: Request, template: str, code: int = 200, **values: Any) -> Response:
        """The page ``template`` for the request's user."""
        session = request.cookies.get(SESSION_COOKIE)
        user = getattr(request.state, "user", None)
        roles = sorted(self.web.identity.roles(user)) if user else []
        html = self.env.get_template(template).render(
            user=user,
            roles=roles,
            csrf=csrf_for(session) if session and user else "",
            path=request.url.path,
            **values,
        )
        return HTMLResponse(html, code, headers=HEADERS)


# ---------------------------------------------------------------------- numbers as text


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def rate_text(rate: Any) -> str:
    """A rate as the report prints it (``Rate.text``); ``-`` when there is none."""
    return "-" if rate is None else str(rate.text())


def kappa_text(kappa: Any) -> str:
    """A kappa as the report prints it (``Kappa.text``); ``-`` when there is none."""
    return "-" if kappa is None else str(kappa.text())


def hour_text(rate: Any) -> str:
    """``4.000 [1.090, 10.242] per hour (4 in 1.000 h)``."""
    counted = f"({rate.count} in {rate.hours:.3f} h)"
    if rate.rate is None:
        return f"no time recorded {counted}"
    return f"{_f(rate.rate)} [{_f(rate.low)}, {_f(rate.high)}] per hour {counted}"


# ---------------------------------------------------------------------- the charts


def _name(protocol: Any) -> str:
    return str(protocol.title or protocol.protocol[:12])


def charts(report: ReviewReport) -> dict[str, Any]:
    """The page's three charts (SVG) from the report, or None where there is nothing to draw."""
    rates: list[Point] = []
    kappas: list[Point] = []
    hours: list[Point] = []
    for p in report.protocols:
        name = _name(p)
        labelled = [
            ("matches the reference", p.matches_reference),
            ("audit contradicts the automated verdict", p.automated_disagreement),
        ]
        labelled += [(f"node {a.node}: raw agreement", a.raw) for a in p.agreement]
        labelled += [
            (f"{t.assistance}: agrees with the decision", t.agrees_with_decision)
            for t in p.throughput
        ]
        for what, rate in labelled:
            if rate is not None and rate.n > 0:
                rates.append(
                    Point(f"{name} · {what}", rate.rate, rate.low, rate.high, rate_text(rate))
                )
        for a in p.agreement:
            k = a.kappa
            if k is not None:
                kappas.append(
                    Point(f"{name} · node {a.node}", k.value, k.low, k.high, kappa_text(k))
                )
        for t in p.throughput:
            d = t.decisions
            hours.append(Point(f"{name} · {t.assistance}", d.rate, d.low, d.high, hour_text(d)))
    top = max([v for h in hours for v in (h.value, h.high) if v is not None] or [1.0])
    return {
        "rates": _chart(
            "chart-rates",
            "Rates with their 95 % intervals",
            "One row per protocol and measure; a dot at the rate, a line across its interval, "
            "on a scale from 0 to 1.",
            rates,
            0.0,
            1.0,
        ),
        "kappas": _chart(
            "chart-kappa",
            "Agreement beyond chance (kappa) with 95 % intervals",
            "One row per protocol and review node; the dashed line is 0 (no better than "
            "chance), the scale runs from -1 to 1.",
            kappas,
            -1.0,
            1.0,
            zero=0.0,
        ),
        "hours": _chart(
            "chart-hours",
            "Decisions per reviewer-hour, by declared assistance, with 95 % intervals",
            "One row per protocol and kind of declared assistance; a dot at decisions per "
            "hour (claim to response), a line across its exact Poisson interval.",
            hours,
            0.0,
            top * 1.1,
        ),
    }


def _chart(ident: str, title: str, desc: str, points: list[Point], *scale: float, **kw: Any) -> Any:
    """A chart and the rows it draws (the page prints them as a table), or None when empty."""
    if not points:
        return None
    return {"svg": interval_chart(ident, title, desc, points, *scale, **kw), "points": points}


# ---------------------------------------------------------------------- the routes


def install_report(app: FastAPI, web: Web, max_body: int) -> None:
    """Add ``/reports/review`` (page) and ``/v1/reports/review`` (JSON) to ``app``; the
    campaign routes come with it (``assay.web._campaigns``)."""
    from assay.web._campaigns import install_campaigns

    pages = Pages(web)

    def compute(protocol: list[str], reference: str | None) -> ReviewReport:
        return review_report(web.platform.reviews, protocol, reference or None)

    @app.get("/v1/reports/review")
    def report_json(
        request: Request,
        protocol: Annotated[list[str] | None, Query()] = None,
        reference: str | None = None,
    ) -> Response:
        """The review report (``assay review report --json``), to managers."""
        api_user(web, request, "manager")
        try:
            return _json(compute(protocol or [], reference).to_json())
        except InvalidInput as exc:
            raise HTTPException(422, field_message(exc, FIELDS)) from None

    @app.get("/reports/review", include_in_schema=False)
    def report_page(
        request: Request,
        protocol: Annotated[list[str] | None, Query()] = None,
        reference: str | None = None,
    ) -> Response:
        page_user(web, request, "manager")
        try:
            report = compute(protocol or [], reference)
        except InvalidInput as exc:
            raise PageError(422, field_message(exc, FIELDS)) from None
        every = compute([], None) if protocol else report
        return pages.render(
            request,
            "report_review.html",
            report=report,
            charts=charts(report),
            choices=[(p.protocol, _name(p)) for p in every.protocols],
            chosen=set(protocol or []),
        )

    install_campaigns(app, web, pages, max_body)
