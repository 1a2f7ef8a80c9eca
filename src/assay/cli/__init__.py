"""The ``assay`` command: thin twins of the library functions (see ``_app``)."""

from assay.cli._app import app, main

__all__ = ["app", "main"]
