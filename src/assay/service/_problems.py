"""Errors become HTTP answers in one place: every refusal is ``{"detail": "<where>: <what>"}``.

``ApiError`` carries the status (400 not JSON, 413 too large, 422 the wrong shape or too many
items, 429 the sandbox queue is full); FastAPI's own validation errors, starlette's (404, 405)
and anything unexpected (500) are rewritten into the same one-message shape, so a client parses
one form of error. A refusal is about the *request*; a problem with one item is that item's
``error`` result instead.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from assay._errors import InvalidInput
from assay.service._encoding import json_bytes


class ApiError(Exception):
    """A request the service refuses as a whole (never one item of it)."""

    def __init__(
        self, status: int, message: str, *, where: str | None = None, retry_after: int | None = None
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        super().__init__(f"{where}: {message}" if where else message)

    @classmethod
    def from_input(cls, exc: InvalidInput, status: int = 422) -> ApiError:
        """An ``InvalidInput`` (its message already names the field) as a refusal."""
        return cls(status, str(exc))


def problem(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """The one error body."""
    return Response(
        json_bytes({"detail": message}), status, headers=headers, media_type="application/json"
    )


def _location(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def install(app: FastAPI) -> None:
    """Route every error the app can raise to ``problem``."""

    async def api_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return problem(exc.status, str(exc), headers)

    async def validation(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        message = f"{_location(tuple(first.get('loc', ())))}: {first.get('msg', 'invalid')}"
        return problem(422, message)

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return problem(exc.status_code, str(exc.detail), dict(exc.headers or {}) or None)

    async def internal(_: Request, exc: Exception) -> Response:
        return problem(500, f"internal error: {type(exc).__name__}: {exc}")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(Exception, internal)
    app.add_exception_handler(RequestValidationError, validation)
    app.add_exception_handler(HTTPException, http_error)
