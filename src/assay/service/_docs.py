"""``/docs``: the API reference as one self-contained page, rendered on the server.

FastAPI's own ``/docs`` and ``/redoc`` load Swagger UI and ReDoc from a CDN. On the origin that
also serves the people's pages, a script from another site can use a signed-in visitor's
session (fetch a page, read its CSRF token, post a form as them) (adversarial review adv-web).
So the reference is plain HTML built from the OpenAPI document, with no script at all, and the
document itself stays at ``/openapi.json`` for any client or viewer a user runs on their own.
"""

from __future__ import annotations

from html import escape
from typing import Any

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_METHODS = ("get", "post", "put", "patch", "delete")


def reference_page(document: dict[str, Any]) -> str:
    """Every operation of ``document`` (method, path, summary, description), in path order."""
    info = document.get("info", {})
    rows: list[str] = []
    for path, operations in sorted(document.get("paths", {}).items()):
        for method in _METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            summary = escape(str(operation.get("summary", "")))
            description = escape(str(operation.get("description", "")))
            rows.append(
                f"<section><h2><code>{method.upper()} {escape(path)}</code></h2>"
                f"<p>{summary}</p><pre>{description}</pre></section>"
            )
    title = escape(str(info.get("title", "API")))
    version = escape(str(info.get("version", "")))
    intro = escape(str(info.get("description", "")))
    return (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>{title} {version}: API reference</title>"
        f"<h1>{title} {version}: API reference</h1><pre>{intro}</pre>"
        '<p>The OpenAPI document: <a href="/openapi.json">/openapi.json</a>.</p>'
        + "".join(rows)
        + "</html>"
    )
