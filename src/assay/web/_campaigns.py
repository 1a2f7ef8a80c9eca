"""Review campaigns over HTTP: list them, show one (items, decisions, progress, a ranking's
order) and, for managers, open one: the operations ``assay review campaign create|show``
offers, through the same platform calls (``platform.reviews.campaigns``), as JSON under
``/v1/campaigns`` (bearer token) and as pages under ``/campaigns`` (session; the create form
carries the CSRF token). Reviewers claim and answer campaign seats on the pages and API they
already use for review stages (``/review``, ``/v1/seats``): a campaign seat is a seat.

Who sees a campaign: a user with the ``manager`` role who opened it, or who manages every
problem whose runs it reviews (so a campaign over uploaded files shows to every manager). An
audit shows submissions' work, so this is the rule ``campaign create`` applies to its opener.
Anything else is "not found", exactly as an id that does not exist.

Items over HTTP are a runs query (``runs:KEY=VALUE,...``) or uploaded files; a folder on the
server's disk is never read on a request's say-so.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.responses import RedirectResponse, Response

from assay._errors import InvalidInput
from assay.platform import CampaignView
from assay.review import ReviewNode, load_yaml, parse_protocol, parse_seat
from assay.web._access import NOT_FOUND, Refused, Web
from assay.web._api import _json, _small_json, api_user
from assay.web._identity import SESSION_COOKIE, csrf_for, same
from assay.web._pages import HEADERS, PageError, page_user
from assay.web._report_page import field_message

if TYPE_CHECKING:
    from assay.web._report_page import Pages

FIELDS = {"--items": "items", "--sample": "sample", "--seed": "seed", "--protocol": "protocol"}
"""The CLI's option names in the platform's refusals, as the request's field names."""
MAX_PROTOCOL = 256 * 1024
MAX_FILES = 256
"""Item files in one upload (a larger set: a runs query, or the CLI over a folder)."""
CAMPAIGN_ID = re.compile(r"cmp-[0-9a-f]{8,64}")
"""What a campaign id looks like (``new_id``): anything else is not looked up at all."""
ITEMS_OVER_HTTP = (
    "items: give a runs query (runs:KEY=VALUE,...) or upload the item files; "
    "a folder on the server is not read over HTTP"
)


class _BadField(Exception):
    """A request field that cannot be used: its name and why (422)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message if message.startswith(f"{field}:") else f"{field}: {message}")


# ---------------------------------------------------------------------- reading


def visible(web: Web, cid: str, user: str) -> bool:
    """Whether ``user`` (a manager) may see campaign ``cid`` (see the module docstring)."""
    record, _, _ = web.platform.reviews.campaigns.record(cid)
    if record.by == user:
        return True
    problems = {item.problem for item in record.items if item.problem}
    return all(user in web.managers(problem) for problem in problems)


def listing(web: Web, user: str) -> list[dict[str, Any]]:
    """The campaigns ``user`` may see, oldest first, each in a line's worth of fields."""
    campaigns = web.platform.reviews.campaigns
    rows = []
    for cid in campaigns.all():
        record, _, opened = campaigns.record(cid)
        if not visible(web, cid, user):
            continue
        rows.append(
            {
                "campaign": cid,
                "title": record.title,
                "protocol_id": record.protocol_id,
                "by": record.by,
                "created": opened.isoformat().replace("+00:00", "Z"),
                "source": record.source,
                "candidates": record.candidates,
                "sample": record.sample,
                "seed": record.seed,
                "items": len(record.items),
            }
        )
    return rows


def show(web: Web, cid: str, user: str) -> CampaignView:
    """``campaign show`` as ``user`` may see it; 404 when they may not, as for an unknown id."""
    campaigns = web.platform.reviews.campaigns
    if not CAMPAIGN_ID.fullmatch(cid):
        raise Refused(404, NOT_FOUND)
    try:
        seen = visible(web, cid, user)
    except InvalidInput:
        raise Refused(404, NOT_FOUND) from None
    if not seen:
        raise Refused(404, NOT_FOUND)
    return campaigns.show(cid, user)


def progress(view: CampaignView) -> dict[str, int]:
    """How far the campaign is: items decided, seats answered of all seats."""
    seats = [s for item in view.items for node in item.review.nodes for s in node.seats]
    return {
        "total": len(view.items),
        "decided": sum(item.decision is not None for item in view.items),
        "seats": len(seats),
        "answered": sum(s.state == "answered" for s in seats),
    }


def campaign_seat(web: Web, seat: str, user: str) -> tuple[str, ReviewNode, Any]:
    """A campaign seat ``user`` holds or answered, for the seat page: what it reviews, the
    node, and the seat's record (404 for anything else)."""
    parsed = parse_seat(seat)
    if parsed is None or not CAMPAIGN_ID.fullmatch(parsed[1]):
        raise Refused(404, NOT_FOUND)
    iid, cid, node_name = parsed[0], parsed[1], parsed[3]
    campaigns = web.platform.reviews.campaigns
    try:
        record, protocol, _ = campaigns.record(cid)
        view = campaigns.show(cid, user)
    except InvalidInput:
        raise Refused(404, NOT_FOUND) from None
    item = next((i for i in view.items if i.item == iid), None)
    mine = None
    for node in item.review.nodes if item else []:
        for found in node.seats:
            if found.seat == seat and found.user == user:
                mine = found
    if item is None or mine is None or node_name not in protocol.nodes:
        raise Refused(404, NOT_FOUND)
    what = f"campaign {cid} ({record.title or 'untitled'}), item {item.label}"
    return what, protocol.review(node_name), mine


# ---------------------------------------------------------------------- creating


def _whole(value: Any, field: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise _BadField(field, "give a whole number")
    if isinstance(value, int) and abs(value) < 10**18:
        return value
    text = value.strip() if isinstance(value, str) else ""
    if text.lstrip("-").isascii() and text.lstrip("-").isdigit() and len(text) <= 18:
        return int(text)
    raise _BadField(field, "give a whole number")


def _protocol(raw: Any) -> Any:
    if isinstance(raw, bytes | str):
        data = raw.encode() if isinstance(raw, str) else raw
        if not data.strip():
            raise _BadField("protocol", "give the protocol (YAML or JSON)")
        if len(data) > MAX_PROTOCOL:
            raise _BadField("protocol", f"larger than {MAX_PROTOCOL} bytes")
        raw = load_yaml(data, "protocol")
    if raw is None:
        raise _BadField("protocol", "give the protocol (YAML or JSON)")
    return parse_protocol(raw, "protocol")


def _file_name(name: str | None, taken: set[str]) -> str:
    plain = PurePosixPath((name or "").replace("\\", "/")).name
    if not plain or plain.startswith("."):
        raise _BadField("items", f"{name!r} is not a plain file name (empty or hidden)")
    if plain in taken:
        raise _BadField("items", f"two item files are named {plain!r}")
    taken.add(plain)
    return plain


def create(
    web: Web,
    user: str,
    protocol: Any,
    items: Any,
    files: list[tuple[str | None, bytes]],
    sample: Any,
    seed: Any,
) -> CampaignView:
    """Open a campaign as ``user`` through ``campaigns.create``: ``items`` a runs query, or
    ``files`` (name, bytes) written to a private temporary folder first. _BadField names the
    request's field; a user who does not manage a selected problem is refused (403)."""
    n, s = _whole(sample, "sample"), _whole(seed, "seed")
    try:
        parsed = _protocol(protocol)
    except InvalidInput as exc:
        raise _BadField("protocol", str(exc)) from None
    if items is not None and (not isinstance(items, str) or len(items) > 4096 or "\x00" in items):
        raise _BadField("items", "give a runs query as text (at most 4096 characters)")
    query = items or ""
    if files and query:
        raise _BadField("items", "give a runs query or item files, not both")
    if not files and not query.startswith("runs:"):
        raise _BadField("items", ITEMS_OVER_HTTP)
    if len(files) > MAX_FILES:
        raise _BadField("items", f"{len(files)} files (at most {MAX_FILES} in one upload)")
    campaigns = web.platform.reviews.campaigns
    try:
        if not files:
            return campaigns.create(parsed, query, user, n, s)
        with tempfile.TemporaryDirectory(prefix="assay-campaign-") as tmp:
            folder = Path(tmp) / "uploaded"
            folder.mkdir()
            taken: set[str] = set()
            for name, data in files:
                (folder / _file_name(name, taken)).write_bytes(data)
            names = ", ".join(sorted(taken))
            source = (
                f"uploaded by {user}: {names}"
                if len(names) <= 200
                else f"{len(taken)} files uploaded by {user}"
            )
            try:
                return campaigns.create(parsed, str(folder), user, n, s, source)
            except InvalidInput as exc:  # about one uploaded file: name it, never the server path
                if exc.where is None or not exc.where.startswith(str(folder)):
                    raise
                said = str(exc).removeprefix(f"{exc.where}: ")
                raise _BadField("items", f"{Path(exc.where).name!r}: {said}") from None
    except InvalidInput as exc:
        if exc.where == "--as":
            raise Refused(403, str(exc).removeprefix("--as: ")) from None
        field = FIELDS.get(exc.where or "", "items")
        raise _BadField(field, field_message(exc, FIELDS)) from None


async def read_form(
    request: Request, max_body: int
) -> tuple[dict[str, str], list[tuple[str | None, bytes]], Any]:
    """A bounded form (multipart or urlencoded): its text fields, its ``item`` files, and
    ``protocol`` (text, or an uploaded file's bytes)."""
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        raise HTTPException(411, "give the body's Content-Length")
    if int(length) > max_body:
        raise HTTPException(413, f"the upload is larger than {max_body} bytes")
    try:
        form = await request.form(max_files=MAX_FILES + 1, max_fields=32)
    except Exception:  # starlette's parser says what was malformed; the reason is not needed
        raise HTTPException(400, "the body is not a valid form") from None
    texts: dict[str, str] = {}
    files: list[tuple[str | None, bytes]] = []
    protocol: Any = None
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                data = await value.read()
                if name == "protocol":
                    protocol = data
                elif name == "item" and (data or value.filename):
                    files.append((value.filename, data))
                elif name != "item":
                    raise HTTPException(422, f"{name}: not a file field (item, protocol are)")
            elif name == "protocol":
                protocol = value.replace("\r\n", "\n")
            else:
                texts[name] = value
    finally:
        await form.close()
    return texts, files, protocol


# ---------------------------------------------------------------------- the routes


def install_campaigns(app: FastAPI, web: Web, pages: Pages, max_body: int) -> None:
    """Add ``/v1/campaigns`` and the ``/campaigns`` pages to ``app``."""

    def refused(exc: Refused) -> HTTPException:
        return HTTPException(exc.status, str(exc))

    @app.get("/v1/campaigns")
    def campaigns_json(request: Request) -> Response:
        """The campaigns you may see (managers)."""
        return _json({"campaigns": listing(web, api_user(web, request, "manager"))})

    @app.get("/v1/campaigns/{campaign}")
    def campaign_json(request: Request, campaign: str) -> Response:
        """``assay review campaign show --json``: items, decisions, the full record."""
        user = api_user(web, request, "manager")
        try:
            return _json(show(web, campaign, user).to_json())
        except Refused as exc:
            raise refused(exc) from None

    @app.post("/v1/campaigns", status_code=201)
    async def create_json(request: Request) -> Response:
        """Open a campaign (managers): a JSON body ``{"protocol": OBJECT|YAML, "items":
        "runs:...", "sample"?: N, "seed"?: S}``, or a multipart form with ``protocol``
        (text or file), ``items`` (a runs query) or ``item`` files, ``sample``, ``seed``."""
        user = await run_in_threadpool(api_user, web, request, "manager")
        if request.headers.get("content-type", "").startswith("application/json"):
            body = await _small_json(request, MAX_PROTOCOL + 64 * 1024)
            protocol, items = body.get("protocol"), body.get("items")
            files: list[tuple[str | None, bytes]] = []
            sample, seed = body.get("sample"), body.get("seed")
        else:
            texts, files, protocol = await read_form(request, max_body)
            items, sample, seed = texts.get("items"), texts.get("sample"), texts.get("seed")
        try:
            view = await run_in_threadpool(create, web, user, protocol, items, files, sample, seed)
        except _BadField as exc:
            raise HTTPException(422, str(exc)) from None
        except Refused as exc:
            raise refused(exc) from None
        return _json(view.to_json(), 201)

    @app.get("/campaigns", include_in_schema=False)
    def campaigns_page(request: Request) -> Response:
        user = page_user(web, request, "manager")
        return pages.render(
            request, "report_campaigns.html", campaigns=listing(web, user), errors={}, values={}
        )

    @app.post("/campaigns", include_in_schema=False)
    async def create_page(request: Request) -> Response:
        user = await run_in_threadpool(page_user, web, request, "manager")
        texts, files, protocol = await read_form(request, max_body)
        session = request.cookies.get(SESSION_COOKIE) or ""
        given = texts.get("csrf")
        if not isinstance(given, str) or not session or not same(given, csrf_for(session)):
            raise PageError(
                403,
                "This form has expired or did not come from this site; reload the page and try again.",
            )
        items, sample, seed = texts.get("items"), texts.get("sample"), texts.get("seed")
        try:
            view = await run_in_threadpool(create, web, user, protocol, items, files, sample, seed)
        except Refused as exc:
            raise PageError(exc.status, str(exc)) from None
        except _BadField as exc:
            errors = {exc.field: str(exc)}
            values = {**texts, "protocol": protocol if isinstance(protocol, str) else ""}
            return await run_in_threadpool(
                lambda: pages.render(
                    request,
                    "report_campaigns.html",
                    422,
                    campaigns=listing(web, user),
                    errors=errors,
                    values=values,
                )
            )
        target = f"/campaigns/{quote(view.campaign, safe='')}"
        return RedirectResponse(target, 303, headers=HEADERS)

    @app.get("/campaigns/{campaign}", include_in_schema=False)
    def campaign_page(request: Request, campaign: str) -> Response:
        user = page_user(web, request, "manager")
        try:
            view = show(web, campaign, user)
        except Refused as exc:
            raise PageError(exc.status, str(exc)) from None
        return pages.render(request, "report_campaign.html", campaign=view, progress=progress(view))
