"""The web side of ``assay serve``: people's API under ``/v1`` (bearer tokens) and the pages
(login with the token; a session cookie; CSRF on every form) for participants, reviewers and
managers, over the one platform ledger. ``install_web(app, settings)`` adds them to the
service's app. FastAPI and Jinja2 are imported here, so only the service imports this package.
See docs/web.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI

from assay.web._access import Refused, Web
from assay.web._api import install_api
from assay.web._identity import Identity, bearer, csrf_for
from assay.web._pages import install_pages
from assay.web._report_page import install_report

if TYPE_CHECKING:
    from assay.service import Settings


def install_web(app: FastAPI, settings: Settings) -> Web:
    """Add the people's API and the pages to ``app``; the platform (``settings.config.db``)
    opens on first use and closes with ``app.state.web.close()``."""
    web = Web(settings.config)
    app.state.web = web
    install_api(app, web, settings.max_body_bytes)
    install_pages(app, web, settings.max_body_bytes)
    install_report(app, web, settings.max_body_bytes)  # the review report, campaigns
    return web


__all__ = ["Identity", "Refused", "Web", "bearer", "csrf_for", "install_web"]
