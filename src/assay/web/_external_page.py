"""The external-evidence page: the party a ``party`` stage names records its word (a
conclusion and a reason), a supplier a ``rule`` stage names pastes the evidence (JSON, to which
assay applies the stage's rule). Only those named see the form (404 to anyone else, as for an
unknown submission); the form carries the session's CSRF token; a refusal, the page's own or
the platform's, is shown beside the field it concerns, and nothing is recorded then. The
platform applies its rule of who may record again when recording (``Platform.record_external``)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import FastAPI, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from assay.status import Status
from assay.web._access import Refused, Web
from assay.web._pages import HEADERS, PageError, PageKit

SMALL_FORM = 1024 * 1024
"""The largest evidence form taken (url-encoded)."""

_EXTERNAL_FIELDS = {"--evidence: ": "evidence", "--result: ": "result", "--as: ": "_form"}
"""The platform's refusals of a recording, by the option they name, and the field they concern."""


def _small(request: Request) -> None:
    """A url-encoded form must say its length, and be no larger than ``SMALL_FORM``."""
    length = request.headers.get("content-length")
    if length is None or not (length.isascii() and length.isdigit()):
        raise PageError(411, "The form did not say its length.")
    if int(length) > SMALL_FORM:
        raise PageError(413, f"The form is larger than {SMALL_FORM} bytes.")


def install_external(app: FastAPI, web: Web, kit: PageKit) -> None:
    """Add ``/submissions/ID/external/STAGE`` (GET the form, POST it) to ``app``."""

    @app.get("/submissions/{submission}/external/{stage}", include_in_schema=False)
    @kit.page
    def external(request: Request, submission: str, stage: str) -> Response:
        user = kit.who(request)
        form = web.external_form(submission, stage, user)
        return kit.render(request, "external.html", form=form, errors={}, values={})

    @app.post("/submissions/{submission}/external/{stage}", include_in_schema=False)
    @kit.page
    async def record_external(request: Request, submission: str, stage: str) -> Response:
        """The named party's word, or a rule stage's evidence; a refusal is shown beside the
        field it concerns and nothing is recorded."""
        _small(request)
        user, posted = await kit.checked_form(request)
        form = await run_in_threadpool(web.external_form, submission, stage, user)
        values = {k: v for k, v in posted.items() if isinstance(v, str) and k != "csrf"}
        errors: dict[str, str] = {}
        status, reason, evidence = None, None, None
        if form.stage.mechanism == "party":
            if values.get("result") not in ("verified", "refuted", "inconclusive"):
                errors["result"] = "Choose what the party concludes."
            else:
                status = Status(values["result"])
            reason = values.get("reason", "").replace("\r\n", "\n").strip()
            if not reason:
                errors["reason"] = "Give the reason; it is recorded with the conclusion."
        else:
            text = values.get("evidence", "").strip()
            if not text:
                errors["evidence"] = "Paste the evidence (a JSON document)."
            evidence = text.encode()
        if not errors:
            try:
                await run_in_threadpool(
                    lambda: web.record_external(
                        submission, stage, user, evidence=evidence, status=status, reason=reason
                    )
                )
            except Refused as exc:
                if exc.status != 422:
                    raise
                message = str(exc)
                option = next((o for o in _EXTERNAL_FIELDS if message.startswith(o)), "")
                errors[_EXTERNAL_FIELDS.get(option, "_form")] = message.removeprefix(option)
        if errors:
            return kit.render(
                request, "external.html", 422, form=form, errors=errors, values=values
            )
        try:
            await run_in_threadpool(web.submission, submission, user)
        except Refused:  # the recorder may not see the submission itself (independent entry)
            return kit.render(request, "external.html", form=form, errors={}, values={}, done=True)
        return RedirectResponse(f"/submissions/{quote(submission)}", 303, headers=HEADERS)
