"""The JSON API under ``/v1`` for people (bearer tokens): problems, submissions, re-checks,
revocations, review seats, external evidence, allowances, and publishing a problem from an
uploaded folder archive. Each route is a thin twin of one ``Web`` method and
answers the document the CLI's ``--json`` prints. The acting user is always the token's owner,
never a name from the request."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from starlette.exceptions import HTTPException
from starlette.responses import Response

from assay._errors import InvalidInput
from assay._strict import StrictJSONError, loads_strict
from assay.status import Status
from assay.web._access import Refused, Web
from assay.web._identity import bearer
from assay.web._throttle import PATIENCE, client_of
from assay.web._uploads import read_archive_upload, read_upload

ROLE_NEEDED = "your roles do not include {role} (assay user add NAME --role {role})"


def _json(document: Any, status: int = 200) -> Response:
    return Response(json.dumps(document), status, media_type="application/json")


def _bytes(data: bytes) -> Response:
    """Bytes as a download: never rendered by a browser as a page of this origin."""
    return Response(
        data,
        media_type="application/octet-stream",
        headers={"Content-Disposition": "attachment", "X-Content-Type-Options": "nosniff"},
    )


def _refused(exc: Refused) -> HTTPException:
    return HTTPException(exc.status, str(exc))


def api_user(web: Web, request: Request, role: str | None = None) -> str:
    """The API request's user from its bearer token: 401 without a valid one, 429 past the
    failed sign-ins of its address (every ``/v1`` route shares this count), 403 without
    ``role``. It may wait for sign-ins in flight: call it from a worker thread (a plain
    ``def`` route, or ``_threaded``), never on the event loop."""
    given = request.headers.get("authorization")
    token = bearer(given)
    client = client_of(request.client.host if request.client else None)
    # a sign-in is counted as failed before its token is looked at, and given back when
    # the token is right: concurrent guesses cannot all pass the check
    failures = web.limits.failures
    wait = failures.take(client, PATIENCE) if given else failures.wait(client)
    if wait:  # refused before the token is looked at: a guesser learns nothing more
        raise HTTPException(
            429,
            f"too many failed sign-ins from this address; retry in {wait} s",
            {"Retry-After": str(wait)},
        )
    name = None
    try:
        name = web.identity.user_of_token(token) if token else None
    finally:
        if given:
            failures.settle(client, counts=name is None)
    if name is None:
        raise HTTPException(
            401,
            "give a valid token: Authorization: Bearer TOKEN",
            {"WWW-Authenticate": "Bearer"},
        )
    if role is not None and role not in web.identity.roles(name):
        raise HTTPException(403, ROLE_NEEDED.format(role=role))
    return name


def install_api(app: FastAPI, web: Web, max_body: int) -> None:
    """Add the ``/v1`` people's routes to ``app``."""
    router = APIRouter(prefix="/v1")

    def user(request: Request, role: str | None = None) -> str:
        return api_user(web, request, role)

    def call(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except Refused as exc:
            raise _refused(exc) from None

    @router.get("/me")
    def me(request: Request) -> Response:
        """Who the token belongs to: name, roles, groups."""
        name = user(request)
        return _json(
            {
                "user": name,
                "roles": sorted(web.identity.roles(name)),
                "groups": sorted(web.identity.groups(name)),
            }
        )

    @router.get("/problems")
    def problems(request: Request) -> Response:
        user(request)
        return _json({"problems": web.problems()})

    @router.post("/problems", status_code=201)
    async def publish(request: Request) -> Response:
        """Multipart with one file field, ``archive``: a ``.tar.gz`` or ``.zip`` of a problem
        folder (``problem.yaml`` at its top or in its one top-level folder). Publishes it as
        ``assay problem publish`` does: ``assay.published/1`` (201 when new, 200 when the same
        folder was published before). 422 names what is wrong; nothing is published then."""
        name = await _threaded(user, request, "manager")
        data, _ = await read_archive_upload(request, max_body)
        done = await _threaded(call, web.publish, data, name)
        return _json(done.to_json(), 201 if done.new else 200)

    @router.get("/problems/{problem}")
    def problem(request: Request, problem: str) -> Response:
        """The verification process of the current revision (``assay problem show --json``)."""
        user(request)
        return _json(call(web.problem, problem).to_json())

    @router.get("/problems/{problem}/statement")
    def statement(request: Request, problem: str) -> Response:
        user(request)
        return Response(call(web.statement, problem), media_type="text/plain; charset=utf-8")

    @router.get("/problems/{problem}/references/{key}")
    def reference(request: Request, problem: str, key: str) -> Response:
        """A reference's bytes; a sealed one only to the problem's managers until it unseals."""
        return _bytes(call(web.reference, problem, key, user(request)))

    @router.get("/problems/{problem}/skills/{path:path}")
    def skill(request: Request, problem: str, path: str) -> Response:
        user(request)
        return _bytes(call(web.skill, problem, path))

    @router.get("/problems/{problem}/allowance")
    def allowance(request: Request, problem: str) -> Response:
        return _json(call(web.allowance, problem, user(request)))

    @router.post("/problems/{problem}/submissions", status_code=201)
    async def submit(request: Request, problem: str) -> Response:
        """Multipart: one file field per role, and an optional ``summary`` text field."""
        name = await _threaded(user, request, "participant")
        files, summary, _ = await read_upload(request, max_body)
        run = await _threaded(call, web.submit, problem, name, files, summary)
        return _json(run.to_json(), 201)

    @router.get("/submissions/{submission}")
    def submission(request: Request, submission: str) -> Response:
        """The submission with its runs and verdict, as this user may see it."""
        return _json(call(web.submission, submission, user(request)).to_json())

    @router.post("/submissions/{submission}/recheck")
    def recheck(request: Request, submission: str) -> Response:
        return _json(call(web.recheck, submission, user(request, "manager")).to_json())

    @router.post("/revocations")
    async def revoke(request: Request) -> Response:
        """``{"checker": ID, "why": TEXT}``: revoke the checker on the problems you manage."""
        name = await _threaded(user, request, "manager")
        body = await _small_json(request)
        checker, why = body.get("checker"), body.get("why")
        if not isinstance(checker, str) or not isinstance(why, str):
            raise HTTPException(422, 'give {"checker": ID, "why": TEXT}')
        try:
            done = await _threaded(web.platform.revoke, checker, why, name)
        except InvalidInput as exc:
            raise HTTPException(422, str(exc)) from None
        return _json(done.to_json())

    @router.post("/submissions/{submission}/external")
    async def external(request: Request, submission: str) -> Response:
        """``{"stage", "result"?, "reason"?, "evidence"?}``: conclude the external stage a run
        waits at: a party's word (``result`` and ``reason``) or, for a rule stage, the
        evidence (a JSON value the stage's schema is applied to). Who may record is the
        contract's rule."""
        name = await _threaded(user, request)
        body = await _small_json(request, 16 * 1024 * 1024)
        stage, result = body.get("stage"), body.get("result")
        reason = body.get("reason")
        if not isinstance(stage, str) or not isinstance(reason, str | None):
            raise HTTPException(422, "stage: give the external stage's name (and reason as text)")
        if result not in (None, "verified", "refuted", "inconclusive"):
            raise HTTPException(422, "result: a party records verified, refuted or inconclusive")
        status = Status(result) if isinstance(result, str) else None
        evidence = json.dumps(body["evidence"]).encode() if "evidence" in body else None
        view = await _threaded(
            call,
            lambda: web.record_external(
                submission, stage, name, evidence=evidence, status=status, reason=reason
            ),
        )
        return _json(await _threaded(web.recorded_for, view, stage, name))

    @router.get("/seats")
    def seats(request: Request) -> Response:
        """The open seats you may claim now, and those you hold."""
        return _json(web.platform.reviews.seats(user(request, "reviewer")).to_json())

    @router.post("/seats/{seat:path}/claim")
    def claim(request: Request, seat: str) -> Response:
        name = user(request, "reviewer")
        try:
            return _json(web.platform.reviews.claim(seat, name).to_json())
        except InvalidInput as exc:
            raise HTTPException(403, str(exc)) from None

    @router.post("/seats/{seat:path}/respond")
    async def respond(request: Request, seat: str) -> Response:
        """The response document (with its ``assistance`` list) as the JSON body."""
        name = await _threaded(user, request, "reviewer")
        data = await _body(request, 1024 * 1024)
        try:
            view = await _threaded(web.platform.reviews.respond, seat, name, data)
        except InvalidInput as exc:
            raise HTTPException(422, str(exc)) from None
        return _json(view.to_json())

    @router.get("/seats/{seat:path}/material")
    def material(request: Request, seat: str, uri: str) -> Response:
        """A material's bytes, to the seat's holder only."""
        return _bytes(call(web.material, seat, uri, user(request, "reviewer")))

    @router.get("/submissions/{submission}/review")
    def review(request: Request, submission: str) -> Response:
        """The whole review record, to the problem's managers."""
        name = user(request, "manager")
        view = call(web.submission, submission, name)
        if name not in web.managers(view.problem):
            raise HTTPException(404, "not found (or not yours to see)")
        return _json(web.platform.reviews.show(submission, name).to_json())

    app.include_router(router)


async def _threaded(fn: Any, *args: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


async def _body(request: Request, limit: int) -> bytes:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise HTTPException(413, f"body larger than {limit} bytes")
    return bytes(data)


async def _small_json(request: Request, limit: int = 64 * 1024) -> dict[str, Any]:
    try:  # strict: duplicate keys are refused, not settled silently (the last one winning)
        body = loads_strict(await _body(request, limit))
    except StrictJSONError as exc:
        raise HTTPException(400, f"the body is not strict JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HTTPException(422, "the body must be a JSON object")
    return body
