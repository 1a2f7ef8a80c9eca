"""assay's version, on the ground floor so that ``_signed`` can stamp it into cache keys
without importing the ``assay`` facade (and with it every layer). Keep it equal to
``pyproject.toml``'s ``version``."""

__version__ = "0.1.0"
