"""Bounds on what one request may ask: its body's bytes (413) and its number of items (422).

The body is read with a running count, so a client that lies in ``Content-Length`` or streams a
chunked body without one is cut off at the limit, not buffered whole. It is parsed as strict JSON
(the reader every other assay input goes through: no ``NaN``, no duplicate keys, no number that
silently becomes infinity), so the service reads exactly what ``assay verify`` would.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from assay._strict import StrictJSONError, loads_strict
from assay.service._problems import ApiError


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"the request body is larger than {limit} bytes", where="body")


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or 413 as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise _too_large(limit)
        except ValueError:
            raise ApiError(400, "Content-Length is not a number", where="headers") from None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request, limit: int) -> Any:
    """The body as strict JSON: 413 past ``limit``, 400 when it is not JSON."""
    body = await read_body(request, limit)
    try:
        return loads_strict(body)
    except StrictJSONError as exc:
        raise ApiError(400, f"the request body is not valid JSON: {exc}", where="body") from None


def object_with(
    data: Any, required: tuple[str, ...], optional: tuple[str, ...] | None = ()
) -> dict[str, Any]:
    """``data`` as a JSON object holding ``required`` keys and no others but ``optional``
    (``None``: other keys are ignored); 422 naming the first key missing or unknown."""
    if not isinstance(data, dict):
        raise ApiError(422, f"must be a JSON object, not {type(data).__name__}", where="body")
    for key in required:
        if key not in data:
            raise ApiError(422, "Field required", where=key)
    if optional is None:
        return data
    allowed = {*required, *optional}
    for key in data:
        if key not in allowed:
            raise ApiError(422, "unknown field", where=str(key))
    return data


def bounded_list(value: Any, where: str, limit: int) -> list[Any]:
    """``value`` as a JSON array of at most ``limit`` entries, else 422 naming ``where``."""
    if not isinstance(value, list):
        raise ApiError(422, f"must be a JSON array, not {type(value).__name__}", where=where)
    if len(value) > limit:
        raise ApiError(
            422,
            f"{len(value)} entries, more than this service takes in one request ({limit})",
            where=where,
        )
    return value
