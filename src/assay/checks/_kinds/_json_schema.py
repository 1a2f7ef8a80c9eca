"""``json_schema``: a JSON file (the work) is valid against a JSON Schema (the author's), draft 2020-12.

Nothing is ever fetched: every ``$ref`` and ``$dynamicRef`` is resolved before validation, against
the schema itself and the bundled draft 2020-12 meta-schemas only, and one that points anywhere
else makes the check inconclusive (jsonschema's default would fetch a remote ``$ref`` over the
network). Regular expressions (``pattern``, ``patternProperties`` and the ``additionalProperties``
that depends on them) run under ``Config.regex_timeout`` with ECMA-262's ASCII meaning of ``\\d``,
``\\w`` and ``\\b``, and ``$`` matching only at the very end, so ``"１２"`` or ``"12\\n"`` do not
pass ``^\\d+$``. jsonschema itself is imported on first use, keeping ``import assay`` light.
A document or schema nested deeper than ``SCHEMA_DEPTH_LIMIT`` levels is not read (the validator
recurses per level): the same refusal whoever calls.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field

from assay._files import UnreadableFile, read_regular
from assay._strict import StrictJSONError, loads_strict
from assay.checks._context import CheckContext
from assay.checks._kinds._common import shorten, workspace_text
from assay.checks._kinds._program import _outside_the_workspace
from assay.checks._patterns import PatternTimeout, compile_pattern, search
from assay.checks._registry import kind
from assay.checks._spec import NonBlank, Spec
from assay.status import Outcome

DRAFT = "https://json-schema.org/draft/2020-12/schema"
T = TypeVar("T")
SCHEMA_DEPTH_LIMIT = 150
"""How deep a document or a schema this kind reads may nest. The validator recurses a few Python
frames per level, so at the general ``JSON_DEPTH_LIMIT`` it would meet the interpreter's
recursion limit at a depth set by the caller's stack: a fixed, lower cap keeps one reading."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class JsonSchemaSpec(Spec):
    """A JSON file in the workspace and the verifier's JSON Schema it must satisfy."""

    verifier_fields = ("schema_",)
    workspace_fields = ("artifact",)

    artifact: NonBlank
    """The JSON file, relative to the workspace (in a contract: the role's name)."""
    schema_: NonBlank = Field(alias="schema")
    """The JSON Schema (draft 2020-12), a file relative to the task file's folder (in a
    contract: the reference key)."""


class _Unusable(Exception):
    """The schema cannot be used as given: inconclusive, saying why."""


@kind("json_schema", JsonSchemaSpec)
def json_schema(spec: JsonSchemaSpec, ctx: CheckContext) -> Outcome:
    """The JSON file ``artifact`` is valid against the JSON Schema ``schema`` (draft 2020-12).

    The artifact must be strict JSON (duplicate keys, NaN and Infinity are refused). A failure
    names the JSON path of the first failing location, in jsonschema's deterministic order
    (schema keywords in the schema's order, then the instance's), e.g.
    ``$.items[2].price: -1 is less than the minimum of 0``. ``format`` is an annotation, as
    draft 2020-12 says by default: it is not checked. A schema that is missing, not JSON, not a
    valid draft 2020-12 schema, declares another draft, or has a ``$ref`` that does not resolve
    within itself (remote references are never fetched) is inconclusive, as is a pattern that
    runs past the time limit. Patterns read ``\\d``, ``\\w`` and ``\\b`` as ASCII and ``$`` as the
    very end, as ECMA-262 does (Python alone would let ``"１２"`` or ``"12\\n"`` match
    ``^\\d+$``). A document nested too deeply to validate is refuted.
    """
    schema_path = (ctx.base_dir or Path.cwd()) / spec.schema_
    outside = _outside_the_workspace(ctx, {"schema": (spec.schema_, schema_path.resolve())})
    if outside is not None:
        return outside
    try:
        raw_schema = read_regular(schema_path, ctx.config.max_file_bytes, "JSON Schema")
    except UnreadableFile as exc:
        return Outcome.inconclusive(f"the schema {spec.schema_!r}: {exc.strerror}")
    text = workspace_text(ctx, spec.artifact)
    if isinstance(text, Outcome):
        validator = _usable(raw_schema, ctx.config.regex_timeout, repr(spec.schema_))
        return validator if isinstance(validator, Outcome) else text
    return validate_json(
        raw_schema,
        text,
        timeout=ctx.config.regex_timeout,
        schema_name=repr(spec.schema_),
        document_name=repr(spec.artifact),
    )


def _usable(raw_schema: bytes, timeout: float, schema_name: str) -> Any:
    """The schema's validator, or the inconclusive outcome that says why it cannot be used."""
    evidence = {"schema_sha256": hashlib.sha256(raw_schema).hexdigest()}
    try:
        return _validator(raw_schema, timeout)
    except _Unusable as exc:
        return Outcome.inconclusive(f"the schema {schema_name} cannot be used: {exc}", evidence)


def on_a_fresh_stack(work: Callable[[], T]) -> T:
    """``work()`` on a thread of its own, whose stack starts empty. The validator recurses a
    number of frames per level that depends on the schema (a ``oneOf`` of a leaf and a ``$ref``
    takes several), so on the caller's thread the depth at which it meets the recursion limit
    depended on how deep the caller already was: one document was valid through one interface
    and "nests too deeply" through another. Here it depends on the document and the schema."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # carried back to the caller's thread, raised there
            failure.append(exc)

    thread = threading.Thread(target=run, name="assay-json-schema", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


def validate_json(
    raw_schema: bytes, text: str, *, timeout: float, schema_name: str, document_name: str
) -> Outcome:
    """``text`` (a strict JSON document) against ``raw_schema`` (draft 2020-12), as the
    ``json_schema`` kind judges it; the platform's rule stages judge evidence with it too.

    Refuted, naming the first failing JSON path, when the document does not meet the schema or
    is not strict JSON; inconclusive when the schema cannot be used."""
    evidence: dict[str, Any] = {"schema_sha256": hashlib.sha256(raw_schema).hexdigest()}
    validator = _usable(raw_schema, timeout, schema_name)
    if isinstance(validator, Outcome):
        return validator
    evidence["artifact_sha256"] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        instance = loads_strict(text, max_depth=SCHEMA_DEPTH_LIMIT)
    except StrictJSONError as exc:
        return Outcome.refuted(f"{document_name} is not strict JSON: {exc}", evidence)
    from referencing.exceptions import Unresolvable

    try:
        first = on_a_fresh_stack(lambda: next(iter(validator.iter_errors(instance)), None))
    except Unresolvable as exc:  # a reference reached only through a non-keyword location
        return Outcome.inconclusive(
            f"the schema {schema_name} cannot be used: a $ref reached while validating, "
            f"{str(getattr(exc, 'ref', '?'))!r}, is not in the schema, and remote references "
            "are never fetched",
            evidence,
        )
    except PatternTimeout as exc:
        return Outcome.inconclusive(f"a pattern of the schema on {document_name}: {exc}", evidence)
    except RecursionError:
        return Outcome.refuted(
            f"{document_name} nests too deeply to be validated: flatten the document", evidence
        )
    if first is None:
        return Outcome.verified(
            f"{document_name} is valid against the schema {schema_name}", evidence
        )
    where = json_path(first.absolute_path)
    message = shorten(first.message, 300)
    closest = ""
    if first.context:
        from jsonschema.exceptions import best_match

        best = best_match(first.context)
        if best is not None:
            closest = f" (closest: {json_path(best.absolute_path)}: {shorten(best.message, 200)})"
    evidence.update(path=where, keyword=str(first.validator), schema_path=_pointer(first))
    return Outcome.refuted(f"{where}: {message}{closest}", evidence)


def json_path(parts: Any) -> str:
    """``$.items[2].price``; a key that is not an identifier is quoted, ``$["a.b"]``."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}"
        else:
            path += f"[{json.dumps(part)}]"
    return path


def _pointer(error: Any) -> str:
    return "/" + "/".join(str(part) for part in error.absolute_schema_path)


def _validator(raw: bytes, timeout: float) -> Any:
    """A draft 2020-12 validator for the schema, every reference in it already resolved."""
    try:
        schema = loads_strict(raw, max_depth=SCHEMA_DEPTH_LIMIT)
    except StrictJSONError as exc:
        raise _Unusable(f"it is not strict JSON: {exc}") from None
    if not isinstance(schema, dict | bool):
        raise _Unusable(f"a schema is an object or a boolean, not {type(schema).__name__}")
    declared = schema.get("$schema", DRAFT) if isinstance(schema, dict) else DRAFT
    if declared not in (DRAFT, DRAFT + "#"):
        raise _Unusable(
            f"it declares $schema {shorten(str(declared), 80)!r}; this kind validates draft "
            f"2020-12 ({DRAFT}) only"
        )
    from jsonschema.exceptions import SchemaError

    cls = _validator_class(timeout)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/" + "/".join(str(part) for part in exc.absolute_path)
        raise _Unusable(
            f"it is not a valid draft 2020-12 schema: at {where}: {shorten(exc.message, 200)}"
        ) from None
    except RecursionError:
        raise _Unusable("it nests too deeply to be checked") from None
    registry = _resolve_everything(schema)
    return cls(schema, registry=registry)


def _refuse(uri: str) -> Any:
    """The registry's retrieve function: nothing outside the schema is ever fetched."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def _resolve_everything(schema: Any) -> Any:
    """A registry that can fetch nothing, after resolving every ``$ref`` and ``$dynamicRef`` of
    the schema through it and compiling every pattern: whatever the instance, validation never
    meets an unresolvable reference or a malformed pattern."""
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped]
    from referencing import Registry
    from referencing.exceptions import PointerToNowhere, Unresolvable
    from referencing.jsonschema import DRAFT202012

    registry: Any = SPECIFICATIONS.combine(Registry(retrieve=_refuse))  # type: ignore[call-arg]
    root = DRAFT202012.create_resource(schema)
    stack = [(root, registry.resolver_with_root(root))]
    try:
        while stack:
            resource, resolver = stack.pop()
            contents = resource.contents
            if isinstance(contents, dict):
                for keyword in ("$ref", "$dynamicRef"):
                    reference = contents.get(keyword)
                    if isinstance(reference, str):
                        _lookup(resolver, keyword, reference, Unresolvable, PointerToNowhere)
                _compile_patterns(contents)
            for sub in resource.subresources():
                stack.append((sub, resolver.in_subresource(sub)))
    except RecursionError:
        raise _Unusable("it nests too deeply to be checked") from None
    return registry


def _lookup(resolver: Any, keyword: str, reference: str, unresolvable: Any, nowhere: Any) -> None:
    try:
        resolver.lookup(reference)
    except unresolvable as exc:
        if isinstance(exc, nowhere) or reference.startswith("#"):
            raise _Unusable(
                f"its {keyword} {reference!r} points to nothing in the schema"
            ) from None
        raise _Unusable(
            f"its {keyword} {reference!r} is not in the schema, and remote references are "
            "never fetched: bundle the referenced schema into this one (under $defs)"
        ) from None


def _compile_patterns(schema: dict[str, Any]) -> None:
    patterns = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
    if isinstance(schema.get("patternProperties"), dict):
        patterns += list(schema["patternProperties"])
    for pattern in patterns:
        try:
            compile_pattern(ecma(pattern))
        except ValueError as exc:
            raise _Unusable(f"its pattern {shorten(pattern, 60)!r} {exc}") from None


def ecma(pattern: str) -> str:
    """``pattern`` with ECMA-262's meaning where Python's differs in ways that over-accept:
    ``\\d``, ``\\w`` and ``\\b`` are ASCII-only, and a ``$`` outside a class matches only at the
    very end (Python's also matches before a final newline)."""
    out, in_class, index = ["(?a)"], False, 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append("\\Z" if char == "$" and not in_class else char)
        index += 1
    return "".join(out)


def _matches(pattern: str, text: str, timeout: float) -> bool:
    return search(ecma(pattern), text, timeout) is not None


@lru_cache(maxsize=4)
def _validator_class(timeout: float) -> Any:
    """Draft 2020-12 with the three regex keywords bounded by ``timeout`` (PatternTimeout)."""
    from jsonschema import Draft202012Validator, ValidationError
    from jsonschema.validators import extend

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _matches(patrn, instance, timeout):
            yield ValidationError(f"{shorten(instance, 80)!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if _matches(patrn, key, timeout):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        named = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [  # in the document's order, so the first error is the same every run
            key
            for key in instance
            if key not in named and not any(_matches(p, key, timeout) for p in patterns)
        ]
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:
            shown = ", ".join(repr(extra) for extra in extras[:10])
            more = f" and {len(extras) - 10} more" if len(extras) > 10 else ""
            yield ValidationError(f"additional properties are not allowed ({shown}{more})")

    return extend(
        Draft202012Validator,
        {
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "additionalProperties": additional_properties,
        },
    )
