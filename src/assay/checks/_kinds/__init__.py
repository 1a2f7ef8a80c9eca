"""Every built-in kind. Adding a kind is one module here and one line below."""

from assay.checks._kinds import (
    _answer_number,
    _answers,
    _exec,
    _files,
    _json_schema,
    _math,
    _program,
    _proofs,
    _sat,
    _sql,
    _web,
)

__all__ = [
    "_answer_number",
    "_answers",
    "_exec",
    "_files",
    "_json_schema",
    "_math",
    "_program",
    "_proofs",
    "_sat",
    "_sql",
    "_web",
]
