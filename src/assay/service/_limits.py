"""Bounds on what one request may ask: its body's bytes (413) and its number of items (422).

The body is read with a running count, so a client that lies in ``Content-Length`` or streams a
chunked body without one is cut off at the limit, not buffered whole. It is parsed as strict JSON
(the reader every other assay input goes through: no ``NaN``, no duplicate keys, no number that
silently becomes infinity), so the service reads exactly what ``assay verify`` would.

The parse runs on a thread, never on the event loop: a 32 MiB body of millions of small values
takes seconds to parse, and on the loop nothing else (``/healthz``, other clients, finished
verdicts) would run meanwhile (adversarial finding S2). The route's ``shape`` (the fields it
takes, the item count) runs on that thread too, and what it does not keep is taken apart there
piece by piece (``_dismantle``): freeing millions of objects in one go holds Python's lock for
as long (0.35 s for 11 M ``{}`` on an idle machine, ~1 s loaded), so dropping a huge refused body
would stall the loop as surely as parsing it. How many bodies are read and held
at once is bounded by the route's ``Judge.place`` (``--max-requests``), taken before reading.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.requests import Request

from assay._strict import StrictJSONError, loads_strict
from assay.service._problems import ApiError

T = TypeVar("T")


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


async def read_json(request: Request, limit: int, shape: Callable[[Any], T]) -> T:
    """``shape`` of the body read as strict JSON, parsed and shaped off the event loop: 413
    past ``limit``, 400 when it is not JSON, and whatever ``shape`` raises (422)."""
    body = await read_body(request, limit)
    return await asyncio.to_thread(_parse, body, shape)


def _parse(body: bytes, shape: Callable[[Any], T]) -> T:
    """``shape(loads_strict(body))``; the rest of the document is taken apart here. ``shape``
    returns new values or top-level parts of the document (a list, or a tuple of lists), never
    anything deeper, which would be emptied. A refusal is raised without its traceback, whose
    frames would keep the document alive until the loop drops it."""
    try:
        data = loads_strict(
            body, max_depth=None
        )  # an envelope: its items' work is capped where judged
    except StrictJSONError as exc:
        error = ApiError(400, f"the request body is not valid JSON: {exc}", where="body")
    else:
        try:
            shaped = shape(data)
        except ApiError as exc:
            error = exc.with_traceback(None)
        else:
            parts = shaped if isinstance(shaped, tuple) else (shaped,)
            _dismantle(data, keep={id(part) for part in parts})
            return shaped
        _dismantle(data, keep=set())
    raise error


def _dismantle(root: Any, keep: set[int]) -> None:
    """Empty ``root``'s containers one entry at a time (except those in ``keep``), so each
    object is freed by a bytecode the interpreter can switch threads between."""
    stack = [root]
    while stack:
        value = stack.pop()
        if id(value) in keep:
            continue
        if isinstance(value, dict):
            while value:
                child = value.popitem()[1]
                if isinstance(child, (dict, list)) and child:
                    stack.append(child)
        elif isinstance(value, list):
            while value:
                child = value.pop()
                if isinstance(child, (dict, list)) and child:
                    stack.append(child)


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
