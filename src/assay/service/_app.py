"""The FastAPI app: routes are thin twins of library functions (``assay.episodes``,
``assay.score_answers``), every refusal goes through ``_problems``, and the hot path writes
pre-serialised JSON (no response-model validation on the way out)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from assay._version import __version__
from assay.checks import AnswerKeyScore, score_answers
from assay.episodes import EpisodeResult, Template
from assay.service import _openrlhf, _problems
from assay.service._docs import HEADERS as DOCS_HEADERS
from assay.service._docs import reference_page
from assay.service._encoding import Result, as_json, json_bytes, results_bytes
from assay.service._judging import Gone, Judge
from assay.service._limits import bounded_list, object_with, read_json
from assay.service._models import REQUESTS, Health, RewardResponse, VerifyResponse
from assay.service._problems import ApiError
from assay.service._settings import Settings
from assay.web import install_web

DESCRIPTION = (
    "assay's reward API: judge episodes (`/v1/verify`), score a submission against an answer "
    "key (`/v1/answer-key`), and OpenRLHF's remote reward protocol (`/get_reward`). "
    "See docs/service.md."
)
GONE = 499
"""The status logged for a request whose client disconnected (nobody receives it)."""


def _json(document: Any, status: int = 200) -> Response:
    return Response(json_bytes(document), status, media_type="application/json")


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone: the next ASGI message after the body is a disconnect."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def settle_heap() -> None:
    """Move everything alive at startup (modules, schemas, routes, templates: hundreds of
    thousands of objects) out of the garbage collector's view, once. A full collection walks
    every tracked object; while judging, the service allocates and frees many small objects,
    so full collections come often and, without this, each walks the whole startup heap again
    (measured: about a tenth of the server's CPU per answer item). What is moved stays until
    the process ends, as it would anyway. Once per process: an app started again (tests,
    an embedding process) would otherwise freeze each app's garbage for good."""
    global _settled
    if _settled:
        return
    _settled = True
    gc.collect()
    gc.freeze()


_settled = False


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service's app. ``InvalidInput`` when the settings name a template that cannot be read."""
    settings = settings or Settings()
    template = (
        Template.load(settings.template) if settings.template else Template.labels_are_tasks()
    )
    judge = Judge(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        settle_heap()
        yield
        judge.close()

    app = FastAPI(
        title="assay",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # a self-contained page instead (_docs.py: no script from another site)
        redoc_url=None,
    )
    app.state.judge = judge
    app.state.settings = settings
    _problems.install(app)
    install_web(app, settings)  # people's /v1 API and pages (assay.web, docs/web.md)
    limit = settings.max_body_bytes

    @app.get("/docs", include_in_schema=False)
    def docs() -> Response:
        """The API reference, rendered from the OpenAPI document with no script."""
        return HTMLResponse(reference_page(app.openapi()), headers=DOCS_HEADERS)

    @app.get("/healthz", response_model=Health)
    async def healthz() -> Response:
        """Liveness, and the queues' counters."""
        return _json(
            {
                "status": "ok",
                "version": __version__,
                "sandbox": judge.queue.stats(),
                "slow": judge.slow.stats(),
                "idempotency_keys": len(judge.store),
            }
        )

    @app.post("/v1/verify", responses={200: {"model": VerifyResponse}}, response_model=None)
    async def verify(request: Request) -> Response:
        """Judge each item; one result per item, in request order (see docs/service.md)."""
        with judge.place():
            items = await read_json(request, limit, _items)
            try:
                results = await judge.judge_all(items, "items", lambda: _disconnected(request))
            except Gone:
                return Response(status_code=GONE)
        return Response(results_bytes(results), media_type="application/json")

    # The hot route, first in the routing table as a plain Starlette route: a request for it
    # skips matching the ~35 routes before it and FastAPI's per-request dependency solving
    # (measured: about half the server's CPU for a one-item request). Same function, same
    # middleware and error handlers; the FastAPI route above stays for the OpenAPI document
    # (and answers a GET with 405, as the shortcut only takes POST).
    app.router.routes.insert(0, Route("/v1/verify", verify, methods=["POST"]))

    def _items(data: Any) -> list[Any]:
        return bounded_list(object_with(data, ("items",))["items"], "items", settings.max_items)

    @app.post("/v1/answer-key", responses={200: {"model": AnswerKeyScore}}, response_model=None)
    async def answer_key(request: Request) -> Response:
        """Score a submission against an answer key: the JSON `assay verify` prints."""
        with judge.place():
            document = await read_json(request, limit, _score)
        return Response(document, media_type="application/json")

    def _score(data: Any) -> bytes:
        """The answer key's score, serialised (on the parse's thread: a big submission is not
        the loop's, and bytes share nothing with the document taken apart after it)."""
        body = object_with(data, ("submission", "answer_key"), ("detail",))
        key, detail = body["answer_key"], body.get("detail", False)
        if not isinstance(key, dict):
            raise ApiError(
                422, "the answer key must be a JSON object {task_id: value}", where="answer_key"
            )
        if not isinstance(detail, bool):
            raise ApiError(422, "must be true or false", where="detail")
        return json_bytes(score_answers(body["submission"], key).to_json(detail=detail))

    @app.post("/get_reward", responses={200: {"model": RewardResponse}}, response_model=None)
    async def get_reward(request: Request) -> Response:
        """OpenRLHF's remote reward protocol; each label becomes an item through the template."""
        with judge.place():
            return await _rewards(request)

    def _samples(data: Any) -> tuple[list[str], list[str], list[Any]]:
        return _openrlhf.samples(data, settings.max_items)

    async def _rewards(request: Request) -> Response:
        queries, prompts, labels = await read_json(request, limit, _samples)
        items: list[dict[str, Any]] = []
        at: list[int] = []
        results: list[Result | None] = []
        for index, (query, prompt, label) in enumerate(zip(queries, prompts, labels, strict=True)):
            response = _openrlhf.response_of(query, prompt)
            if response is None:
                message = f"samples[{index}].query: {_openrlhf.NOT_PREFIXED}"
                results.append(EpisodeResult.invalid(str(index), message))
                continue
            results.append(None)
            at.append(index)
            items.append(template.item(id=str(index), label=label, answer=response))
        try:
            judged = await judge.judge_all(items, "samples", lambda: _disconnected(request))
        except Gone:
            return Response(status_code=GONE)
        for index, result in zip(at, judged, strict=True):
            results[index] = result
        return _json(_openrlhf.reply([as_json(r) for r in results if r is not None]))

    def openapi() -> dict[str, Any]:
        """FastAPI's document, with the request bodies the routes read themselves."""
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for path, model in REQUESTS.items():
                found = model.model_json_schema(ref_template="#/components/schemas/{model}")
                schemas.update(found.pop("$defs", {}))
                schemas[model.__name__] = found
                ref = {"$ref": f"#/components/schemas/{model.__name__}"}
                document["paths"][path]["post"]["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": ref}},
                }
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def app_from_env() -> FastAPI:
    """The app for a uvicorn worker process (``--workers N``): settings come from
    ``ASSAY_SERVICE_SETTINGS``, the JSON ``assay serve`` put there."""
    import os

    raw = os.environ.get("ASSAY_SERVICE_SETTINGS", "{}")
    return create_app(Settings.model_validate_json(raw))
