"""The one wire format: every JSON document assay writes is a model derived from ``WireModel``.

The rules, so a ledger row written today still reads the same in a year:

- field names are snake_case, everywhere (CLI ``--json``, files, the ledger, the HTTP API);
- a document assay emits at the top level carries ``schema``: ``"assay.<document>/<major>"``,
  so a reader knows what it holds without guessing from its shape; nested models do not, except
  a document embedded whole in another (a verdict in a hole result, fixture results in a
  conformance), which keeps its own;
- a reader reads a document with ``read_document``, which refuses another document or another
  major (``InvalidInput`` naming ``schema``) before reading any field;
- adding an optional field keeps the major; renaming, removing or changing the meaning of a field
  bumps it (and the old reader refuses the new major instead of misreading it);
- JSON Schemas of every document are generated into ``docs/schemas/`` (``scripts/schemas``), and a
  test fails when they are not current.

Serialising never fails: models that quote what the candidate wrote clean it when serialised
(see ``assay.status._clean``), so a report can always be encoded.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from assay._errors import InvalidInput


class WireModel(BaseModel):
    """A model that is part of assay's wire format (frozen; ``to_json`` is its one JSON form)."""

    model_config = ConfigDict(
        frozen=True,
        populate_by_name=True,
        use_attribute_docstrings=True,  # field docstrings become the schemas' descriptions
        json_schema_serialization_defaults_required=True,  # ``to_json`` writes every field
    )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (aliases applied: the ``schema`` field is written as ``schema``)."""
        return self.model_dump(mode="json", by_alias=True)


M = TypeVar("M", bound=WireModel)
B = TypeVar("B", bound=BaseModel)


def unvalidated(model: type[B], fields: dict[str, Any], given: set[str] | None = None) -> B:
    """A ``model`` holding ``fields`` (every field, in declaration order) as given, without
    validation: for values the caller produced and knows valid (the hot paths: a verdict per
    item, a ledger row per run). ``model_construct`` does the same at several times the cost.
    ``given``: the fields set explicitly (default: all of ``fields``; a caller with a ready set
    passes a copy of it, which is cheaper)."""
    made = model.__new__(model)
    object.__setattr__(made, "__dict__", fields)
    object.__setattr__(made, "__pydantic_fields_set__", set(fields) if given is None else given)
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", None)
    return made


def schema_id(document: str, major: int = 1) -> str:
    """The value of a document's ``schema`` field, e.g. ``assay.report/1``."""
    return f"assay.{document}/{major}"


def read_document(model: type[M], data: Any) -> M:
    """``data`` (parsed JSON) read as a ``model`` document, refusing any other document or major.

    A reader never guesses: a document without ``schema``, of another kind, or of another major
    version (which may give a field another meaning) is ``InvalidInput`` naming the ``schema``
    field, before any other field is read. Other defects are ``InvalidInput`` naming the field.
    """
    expected = document_id(model)
    if not isinstance(data, dict):
        raise InvalidInput(f"a {expected} document must be a JSON object", where="schema")
    found = data.get("schema")
    if found != expected:
        name = expected.rpartition("/")[0]
        if isinstance(found, str) and found.rpartition("/")[0] == name:
            problem = (
                f"{found!r} is another major version than this assay reads ({expected!r}); "
                "its fields may mean something else, so it is not read"
            )
        elif found is None:
            problem = f"missing: a {expected} document says which it is"
        else:
            problem = f"{found!r} is not {expected!r}"
        raise InvalidInput(problem, where="schema")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "schema"
        raise InvalidInput(first["msg"], where=where) from None


def document_id(model: type[WireModel]) -> str:
    """The ``schema`` value of a top-level document model (TypeError for a nested model)."""
    field = model.model_fields.get("schema_")
    if field is None or not isinstance(field.default, str):
        raise TypeError(f"{model.__name__} is not a top-level document (no schema field)")
    return field.default
