"""Reading a submission's multipart upload: one file field per role and a ``summary`` field,
bounded before anything is parsed (a request without a length, or past the bound, is refused)."""

from __future__ import annotations

from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request

MAX_FIELDS = 64


async def read_upload(
    request: Request, max_body: int, skip: tuple[str, ...] = (), browser: bool = False
) -> tuple[dict[str, bytes], str | None, dict[str, str]]:
    """``(bytes by role, summary, skipped)``; ``skip``: text fields that are not roles (the CSRF
    token), returned apart.
    An empty file input (a role left blank in a browser) is not an artifact. ``browser``: the
    form came from a page, whose text areas send line breaks as CRLF: they become LF again."""
    form = await _bounded_form(request, max_body)
    files: dict[str, bytes] = {}
    summary: str | None = None
    saw_summary = False
    skipped: dict[str, str] = {}
    try:
        for name, value in form.multi_items():
            if name in skip:
                skipped[name] = value if isinstance(value, str) else ""
                continue
            if name == "summary":
                if not isinstance(value, str):
                    raise HTTPException(422, "summary: must be text, not a file")
                if saw_summary:
                    raise HTTPException(422, "summary: given twice (send it once)")
                saw_summary = True
                if browser:
                    value = value.replace("\r\n", "\n")
                summary = value if value != "" else None
            elif isinstance(value, UploadFile):
                data = await value.read()
                if not data and not value.filename:
                    continue
                if name in files:
                    raise HTTPException(422, f"{name}: one file per role")
                files[name] = data
            else:
                raise HTTPException(422, f"{name}: must be a file (one file field per role)")
    finally:
        await form.close()
    return files, summary, skipped


ARCHIVE_FIELD = "archive"


async def _bounded_form(request: Request, max_body: int) -> FormData:
    """The parsed form, after its declared length is checked against ``max_body``."""
    length = request.headers.get("content-length")
    if length is None or not (length.isascii() and length.isdigit()):
        raise HTTPException(411, "give the body's Content-Length")
    if int(length) > max_body:
        raise HTTPException(413, f"the upload is larger than {max_body} bytes")
    try:
        return await request.form(max_files=MAX_FIELDS, max_fields=MAX_FIELDS)
    except Exception:  # starlette's parser says what was malformed; the reason is not needed
        raise HTTPException(400, "the body is not a valid multipart form") from None


async def read_archive_upload(
    request: Request, max_body: int, skip: tuple[str, ...] = ()
) -> tuple[bytes, dict[str, str]]:
    """The bytes of the one ``archive`` file field of a publish form (422 naming the field for
    anything else), and the ``skip`` text fields (the page's CSRF token)."""
    form = await _bounded_form(request, max_body)
    data: bytes | None = None
    skipped: dict[str, str] = {}
    try:
        for name, value in form.multi_items():
            if name in skip:
                skipped[name] = value if isinstance(value, str) else ""
            elif name != ARCHIVE_FIELD:
                raise HTTPException(422, f"{name}: a publish form holds only the archive file")
            elif not isinstance(value, UploadFile):
                raise HTTPException(422, f"{name}: must be a file (.tar.gz or .zip)")
            elif data is not None:
                raise HTTPException(422, f"{name}: give one archive")
            else:
                data = await value.read()
    finally:
        await form.close()
    if not data:
        raise HTTPException(422, f"{ARCHIVE_FIELD}: give the problem folder as a .tar.gz or .zip")
    return data, skipped
