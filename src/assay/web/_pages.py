"""The pages people use (server-rendered with Jinja2; one small script reloads a page while a
run is pending). A page knows its user from the session cookie, never from a field; every form
that changes something carries the session's CSRF token, checked before anything is done."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from assay._errors import InvalidInput
from assay.status import Status
from assay.web import _form
from assay.web._access import Refused, Web
from assay.web._identity import LOGIN_COOKIE, SESSION_COOKIE, SESSION_HOURS, csrf_for, same
from assay.web._throttle import PATIENCE, client_of
from assay.web._uploads import read_archive_upload, read_upload

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
REFRESH_SECONDS = 5


@dataclass(frozen=True)
class PageKit:
    """What a module of pages gets from ``install_pages``: ``render`` a template with the
    user's header, ``who`` is signed in (or the login page; a role when given), the posted
    ``checked_form`` after its CSRF check, and the ``page`` decorator that shows refusals as
    error pages."""

    render: Callable[..., HTMLResponse]
    who: Callable[..., str]
    checked_form: Callable[..., Awaitable[tuple[str, Any]]]
    page: Callable[[Callable[..., Any]], Callable[..., Any]]


class _Login(Exception):
    """No session: the page asks for the login form."""


def page_user(web: Web, request: Request, role: str | None = None) -> str:
    """The page's user from the session cookie (the login page when none); 403 without
    ``role``."""
    user = web.identity.user_of_session(request.cookies.get(SESSION_COOKIE))
    if user is None:
        raise _Login
    request.state.user = user
    if role is not None and role not in web.identity.roles(user):
        raise PageError(403, f"Your roles do not include {role}.")
    return user


class PageError(Exception):
    """A refusal shown as a page (status and a message safe to show)."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


def status_label(status: Any) -> str:
    """The label people see for a status (design.md's words)."""
    if status is None:
        return "Pending"
    return Status(status).label


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("assay.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["label"] = status_label
    env.filters["when"] = lambda m: (
        m.replace(microsecond=0).isoformat().replace("+00:00", "Z") if m else "-"
    )
    env.filters["q"] = lambda s: quote(str(s), safe="")
    return env


def _safe_next(value: str | None) -> str:
    """Only a path on this site (never ``//host`` or a scheme) is followed after login."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/problems"


def install_pages(app: FastAPI, web: Web, max_body: int) -> None:
    """Add the pages, their static files and the login/logout routes to ``app``."""
    env = _environment()
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="assay-web-static")

    def render(request: Request, template: str, code: int = 200, **values: Any) -> HTMLResponse:
        session = request.cookies.get(SESSION_COOKIE)
        user = getattr(request.state, "user", None)
        roles = sorted(web.identity.roles(user)) if user else []
        html = env.get_template(template).render(
            user=user,
            roles=roles,
            csrf=csrf_for(session) if session and user else "",
            path=request.url.path,
            **values,
        )
        return HTMLResponse(html, code, headers=HEADERS)

    def who(request: Request, role: str | None = None) -> str:
        return page_user(web, request, role)

    async def checked_form(request: Request, role: str | None = None) -> tuple[str, Any]:
        """The user and the posted form, after the CSRF token is checked."""
        user = await run_in_threadpool(who, request, role)
        form = await request.form(max_files=0, max_fields=256)
        _csrf(request, form.get("csrf"))
        return user, form

    def _csrf(request: Request, given: Any) -> None:
        session = request.cookies.get(SESSION_COOKIE) or ""
        if not isinstance(given, str) or not session or not same(given, csrf_for(session)):
            raise PageError(
                403,
                "This form has expired or did not come from this site; reload the page and try again.",
            )

    async def on_login(request: Request, _: Exception) -> Response:
        target = quote(request.url.path, safe="/")
        return RedirectResponse(f"/login?next={target}", 303, headers=HEADERS)

    async def on_page_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PageError)
        return render(request, "error.html", exc.status, status=exc.status, message=str(exc))

    app.add_exception_handler(_Login, on_login)
    app.add_exception_handler(PageError, on_page_error)

    def page(fn: Callable[..., Any]) -> Callable[..., Any]:
        """Refusals from the data layer become error pages."""
        import functools

        @functools.wraps(fn)
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                if inspect.iscoroutinefunction(fn):
                    return await fn(*args, **kwargs)
                return await run_in_threadpool(fn, *args, **kwargs)
            except Refused as exc:
                raise PageError(exc.status, str(exc)) from None
            except HTTPException as exc:
                raise PageError(exc.status_code, str(exc.detail)) from None

        return wrapped

    # ------------------------------------------------------------------ login

    @app.get("/", include_in_schema=False)
    def home() -> Response:
        return RedirectResponse("/problems", 303)

    @app.get("/login", include_in_schema=False)
    def login_form(request: Request, next: str = "/problems") -> Response:
        import secrets

        token = secrets.token_urlsafe(32)
        response = render(request, "login.html", login_csrf=token, next=_safe_next(next))
        _login_cookie(response, request, token)
        return response

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=16)
        given, cookie = form.get("csrf"), request.cookies.get(LOGIN_COOKIE) or ""
        if not isinstance(given, str) or not cookie or not same(given, cookie):
            raise PageError(403, "This form has expired; reload the login page and try again.")
        token = form.get("token")
        nxt = _safe_next(form.get("next") if isinstance(form.get("next"), str) else None)  # type: ignore[arg-type]
        client = client_of(request.client.host if request.client else None)

        def again(code: int, error: str, wait: int = 0) -> Response:
            import secrets

            fresh = secrets.token_urlsafe(32)
            response = render(request, "login.html", code, login_csrf=fresh, next=nxt, error=error)
            _login_cookie(response, request, fresh)
            if wait:
                response.headers["Retry-After"] = str(wait)
            return response

        code, error, wait, session = await run_in_threadpool(_sign_in, web, client, token)
        if session is None:
            return again(code, error, wait)
        moved = RedirectResponse(nxt, 303, headers=HEADERS)
        moved.set_cookie(
            SESSION_COOKIE,
            session,
            max_age=int(SESSION_HOURS * 3600),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        moved.delete_cookie(LOGIN_COOKIE, path="/login")
        return moved

    @app.post("/logout", include_in_schema=False)
    @page
    async def logout(request: Request) -> Response:
        await checked_form(request)
        session = request.cookies.get(SESSION_COOKIE) or ""
        await run_in_threadpool(web.identity.end, session)
        response = RedirectResponse("/login", 303, headers=HEADERS)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    # ------------------------------------------------------------------ problems

    @app.get("/problems", include_in_schema=False)
    @page
    def problems(request: Request) -> Response:
        who(request)
        return render(request, "problems.html", problems=web.problems())

    @app.get("/problems/{problem}", include_in_schema=False)
    @page
    def problem(request: Request, problem: str) -> Response:
        user = who(request)
        view = web.problem(problem)
        managers = web.managers(problem)
        now = web.platform.clock()
        return render(
            request,
            "problem.html",
            problem=view,
            statement=web.statement(problem),
            allowance=web.allowance(problem, user),
            manager=user in managers,
            now=now,
        )

    @app.get("/problems/{problem}/references/{key}", include_in_schema=False)
    @page
    def reference(request: Request, problem: str, key: str) -> Response:
        user = who(request)
        return _download(web.reference(problem, key, user))

    @app.get("/problems/{problem}/skills/{path:path}", include_in_schema=False)
    @page
    def skill(request: Request, problem: str, path: str) -> Response:
        who(request)
        return _download(web.skill(problem, path))

    @app.post("/problems/{problem}/submit", include_in_schema=False)
    @page
    async def submit(request: Request, problem: str) -> Response:
        user = await run_in_threadpool(who, request, "participant")
        files, summary, extra = await read_upload(request, max_body, ("csrf",), browser=True)
        _csrf(request, extra.get("csrf"))
        try:
            run = await run_in_threadpool(web.submit, problem, user, files, summary)
        except Refused as exc:
            view = web.problem(problem)
            return render(
                request,
                "problem.html",
                exc.status,
                problem=view,
                statement=web.statement(problem),
                allowance=web.allowance(problem, user),
                manager=user in web.managers(problem),
                now=web.platform.clock(),
                submit_error=str(exc),
            )
        return RedirectResponse(f"/submissions/{quote(run.submission)}", 303, headers=HEADERS)

    # ------------------------------------------------------------------ submissions

    @app.get("/submissions/{submission}", include_in_schema=False)
    @page
    def submission(request: Request, submission: str) -> Response:
        user = who(request)
        view = web.submission(submission, user)
        manager = user in web.managers(view.problem)
        pending = any(r.status is None and r.label.startswith("Pending") for r in view.runs)
        review = web.platform.reviews.show(submission, user) if manager else None
        return render(
            request,
            "submission.html",
            sub=view,
            manager=manager,
            review=review,
            refresh=REFRESH_SECONDS if pending else None,
            external=set(web.external_forms(submission, user)),
        )

    @app.post("/submissions/{submission}/recheck", include_in_schema=False)
    @page
    async def recheck(request: Request, submission: str) -> Response:
        user, _ = await checked_form(request, "manager")
        await run_in_threadpool(web.recheck, submission, user)
        return RedirectResponse(f"/submissions/{quote(submission)}", 303, headers=HEADERS)

    # ------------------------------------------------------------------ external stages

    from assay.web._external_page import install_external  # it imports this module's names

    install_external(
        app, web, PageKit(render=render, who=who, checked_form=checked_form, page=page)
    )

    # ------------------------------------------------------------------ review

    @app.get("/review", include_in_schema=False)
    @page
    def review(request: Request) -> Response:
        user = who(request, "reviewer")
        return render(request, "review.html", seats=web.platform.reviews.seats(user))

    @app.post("/review/claim", include_in_schema=False)
    @page
    async def claim(request: Request) -> Response:
        user, form = await checked_form(request, "reviewer")
        seat = form.get("seat")
        if not isinstance(seat, str):
            raise PageError(422, "Choose a seat.")
        try:
            await run_in_threadpool(web.platform.reviews.claim, seat, user)
        except InvalidInput as exc:
            raise PageError(403, f"The seat could not be claimed: {exc}") from None
        return RedirectResponse(f"/review/seat?id={quote(seat, safe='')}", 303, headers=HEADERS)

    def seat_page(
        request: Request,
        user: str,
        seat: str,
        status: int = 200,
        errors: dict[str, str] | None = None,
        values: dict[str, list[str]] | None = None,
    ) -> Response:
        found = web.seat_page(seat, user)
        return render(
            request,
            "seat.html",
            status,
            seat=found,
            fields=_form.fields(found.node.response_schema),
            errors=errors or {},
            values=values or {},
            agents=_form.MAX_AGENTS,
        )

    @app.get("/review/seat", include_in_schema=False)
    @page
    def seat(request: Request, id: str) -> Response:
        user = who(request, "reviewer")
        return seat_page(request, user, id)

    @app.get("/review/material", include_in_schema=False)
    @page
    def material(request: Request, seat: str, uri: str) -> Response:
        user = who(request, "reviewer")
        return _download(web.material(seat, uri, user))

    @app.post("/review/respond", include_in_schema=False)
    @page
    async def respond(request: Request) -> Response:
        import json

        user, form = await checked_form(request, "reviewer")
        seat = form.get("seat")
        if not isinstance(seat, str):
            raise PageError(422, "No seat named.")
        values = {k: [v for v in form.getlist(k) if isinstance(v, str)] for k in form}
        found = await run_in_threadpool(web.seat_page, seat, user)
        schema = found.node.response_schema
        document, errors = _form.collect(schema, values)
        try:
            document["assistance"] = _form.assistance(values)
        except ValueError as exc:
            errors["assistance"] = str(exc)
        if not errors:
            data = json.dumps(document).encode()
            try:
                await run_in_threadpool(web.platform.reviews.respond, seat, user, data)
            except InvalidInput as exc:
                names = {f.name for f in _form.fields(schema)}
                message = str(exc).removeprefix("--file: ")
                errors = {_form.field_of(str(exc), names): message}
        if errors:
            return await run_in_threadpool(seat_page, request, user, seat, 422, errors, values)
        return RedirectResponse(f"/review/seat?id={quote(seat, safe='')}", 303, headers=HEADERS)

    # ------------------------------------------------------------------ managing

    def manage_page(request: Request, user: str, code: int = 200, **values: Any) -> Response:
        return render(
            request,
            "manage.html",
            code,
            problems=web.managed_by(user),
            checkers=web.runs_by_checker(user),
            **values,
        )

    @app.get("/manage", include_in_schema=False)
    @page
    def manage(request: Request) -> Response:
        user = who(request, "manager")
        return manage_page(request, user)

    @app.post("/manage/publish", include_in_schema=False)
    @page
    async def publish(request: Request) -> Response:
        """A problem folder uploaded as an archive: published as ``assay problem publish``
        does; a refusal is shown beside the file input and nothing is published."""
        user = await run_in_threadpool(who, request, "manager")
        try:
            data, extra = await read_archive_upload(request, max_body, ("csrf",))
        except HTTPException as exc:
            if exc.status_code != 422:
                raise
            # nothing is done with such a form, so its CSRF token need not be read first
            return await run_in_threadpool(
                manage_page, request, user, 422, publish_error=str(exc.detail)
            )
        _csrf(request, extra.get("csrf"))
        try:
            done = await run_in_threadpool(web.publish, data, user)
        except Refused as exc:
            return await run_in_threadpool(
                manage_page, request, user, exc.status, publish_error=str(exc)
            )
        return await run_in_threadpool(manage_page, request, user, published=done)

    @app.post("/manage/revoke", include_in_schema=False)
    @page
    async def revoke(request: Request) -> Response:
        user, form = await checked_form(request, "manager")
        checker, why = form.get("checker"), form.get("why")
        if not isinstance(checker, str) or not isinstance(why, str):
            raise PageError(422, "Name the checker and say why.")
        try:
            await run_in_threadpool(web.platform.revoke, checker, why, user)
        except InvalidInput as exc:
            raise PageError(422, str(exc)) from None
        return RedirectResponse("/manage", 303, headers=HEADERS)


def _download(data: bytes) -> Response:
    return Response(
        data,
        media_type="application/octet-stream",
        headers={**HEADERS, "Content-Disposition": "attachment"},
    )


def _login_cookie(response: Response, request: Request, token: str) -> None:
    """The login form's double-submit cookie: HttpOnly, SameSite=Strict, Secure over https, for
    /login only (a planted one over plain http could log a victim in as the attacker)."""
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        max_age=3600,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/login",
    )


def _sign_in(web: Web, client: str, token: object) -> tuple[int, str, int, str | None]:
    """Check ``token`` under the sign-in limits and start a session: ``(code, error, wait,
    session)``, the session None when refused. One worker thread does all of it: a sign-in
    that waits for others in flight (``Window.take``) must not need a second thread to finish
    its own lookup, or a burst could hold every thread waiting."""
    limits = web.limits
    # counted as a failure before the token is looked at (and given back when it is right),
    # so requests in flight at once cannot all pass the check
    wait = limits.failures.take(client, PATIENCE)
    if wait:  # refused before the token is looked at: a guesser learns nothing more
        return (
            429,
            f"Too many failed sign-ins from your address; try again in {wait} s.",
            wait,
            None,
        )
    user = None
    try:
        if isinstance(token, str) and 0 < len(token.strip()) <= 512:
            user = web.identity.user_of_token(token.strip())
    finally:
        limits.failures.settle(client, counts=user is None)
    if user is None or not isinstance(token, str):
        return 401, "That token is not valid (a newer one may have replaced it).", 0, None
    wait = limits.sessions.take(user, PATIENCE)
    if wait:
        return 429, f"Too many sign-ins as {user} lately; try again in {wait} s.", wait, None
    started = None
    try:
        started = web.identity.start(token.strip())
    finally:
        limits.sessions.settle(user, counts=started is not None)
    if started is None:  # replaced between the two reads
        return 401, "That token is not valid (a newer one may have replaced it).", 0, None
    return 303, "", 0, started[1]
