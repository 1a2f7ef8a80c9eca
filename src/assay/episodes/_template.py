"""Templates: how a dataset's label (ground truth) becomes an item, for callers with fixed call
shapes (OpenRLHF's ``/get_reward``, verl, TRL, inspect_ai, verifiers) that pass a label and a
completion and nothing else.

A template is a task whose values may be placeholders, objects of exactly one of these forms::

    {"$label": "text"}                  the label, as text
    {"$label": "number"}                the label read as a JSON number
    {"$label": "json"}                  the label parsed as JSON
    {"$label": "json", "key": "name"}   one key of a label that is a JSON object

Substitution is structural: a placeholder is replaced by a value, text is never spliced into a
string and nothing is evaluated. Only the template and the label define checks; the completion
is only ever the item's ``answer``, so a completion holding ``{"checks": []}`` is just text. With
no template, the label itself is the task (a JSON object with ``checks``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._errors import InvalidInput
from assay._files import read_regular
from assay._strict import StrictJSONError, loads_strict, rebuild
from assay.episodes._item import UNFIT_LABEL

_FORMS = ("text", "number", "json")
_MAX_TEMPLATE_BYTES = 1 << 20


class _Unfit(Exception):
    """The label does not fit the template; the message says how."""


@dataclass(frozen=True)
class Template:
    """A task with placeholders, or (``body`` None) the rule that a label is its own task."""

    body: dict[str, Any] | None

    @classmethod
    def labels_are_tasks(cls) -> Template:
        """The default: each label is a JSON task (text or an already-parsed object)."""
        return cls(None)

    @classmethod
    def load(cls, path: Path) -> Template:
        """Read a template file; InvalidInput names the file and what is wrong in it."""
        try:
            text = read_regular(path, _MAX_TEMPLATE_BYTES, "template file")
        except OSError as exc:
            raise InvalidInput(
                f"cannot read the template: {exc.strerror}", where=str(path)
            ) from None
        try:
            data = loads_strict(text)
        except StrictJSONError as exc:
            raise InvalidInput(f"not valid JSON: {exc}", where=str(path)) from None
        return cls.from_json(data, where=str(path))

    @classmethod
    def from_json(cls, data: Any, where: str = "template") -> Template:
        """A template from parsed JSON: a task object (``checks`` required, no ``id``)."""
        if not isinstance(data, dict):
            raise InvalidInput("must be a JSON object (a task with placeholders)", where=where)
        if "checks" not in data:
            raise InvalidInput("a template is a task: `checks` is required", where=where)
        for key in ("id", "idempotency_key", "answer", "task"):
            if key in data:
                raise InvalidInput(
                    f"`{key}` cannot be templated (the caller supplies the id and the answer)",
                    where=f"{where}.{key}",
                )
        _check_placeholders(data, where)
        return cls(data)

    def item(self, *, id: str, label: Any, answer: str) -> dict[str, Any]:
        """The item judging ``answer`` against ``label``. Never raises: a label that does not
        fit makes an item that ``parse_episode`` refuses, naming what did not fit."""
        try:
            task = self._task(label)
        except _Unfit as exc:
            return {"id": id, UNFIT_LABEL: str(exc)}
        body = {key: value for key, value in task.items() if key not in ("id", "idempotency_key")}
        return {**body, "id": id, "answer": answer}

    def _task(self, label: Any) -> dict[str, Any]:
        if self.body is None:
            task = _parsed(label) if isinstance(label, str) else label
            if not isinstance(task, dict) or "checks" not in task:
                raise _Unfit("the label must be a JSON task object with `checks` (no template)")
            return task
        filled = _fill(self.body, label)
        assert isinstance(filled, dict)
        return filled


def _parsed(label: str) -> Any:
    try:  # a label is the author's task, as an item is: not capped, as an item is not
        return loads_strict(label, max_depth=None)
    except StrictJSONError as exc:
        raise _Unfit(f"the label is not valid JSON: {exc}") from None


def _placeholder(value: Any) -> str | None:
    """The form of a placeholder object, or None when ``value`` is not one."""
    if isinstance(value, dict) and "$label" in value:
        return str(value["$label"])
    return None


def _check_placeholders(value: Any, where: str) -> None:
    """Every placeholder in ``value`` well formed (without recursion: see ``rebuild``)."""
    stack = [(value, where)]
    while stack:
        node, at = stack.pop()
        form = _placeholder(node)
        if form is not None:
            extra = set(node) - {"$label", "key"}
            if form not in _FORMS or extra:
                raise InvalidInput(
                    'a placeholder is {"$label": "text" | "number" | "json"} (and "key" with '
                    '"json")',
                    where=at,
                )
            if "key" in node and (form != "json" or not isinstance(node["key"], str)):
                raise InvalidInput('"key" goes with {"$label": "json"} and is text', where=at)
        elif isinstance(node, dict):
            stack.extend((inner, f"{at}.{key}") for key, inner in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((inner, f"{at}[{i}]") for i, inner in reversed(list(enumerate(node))))


def _fill(value: Any, label: Any) -> Any:
    def node(value: Any) -> tuple[Any, bool]:
        form = _placeholder(value)
        if form is not None:
            return _substitute(form, value.get("key"), label), False
        return value, isinstance(value, dict | list)

    return rebuild(value, node)


def _substitute(form: str, key: str | None, label: Any) -> Any:
    if form == "text":
        if not isinstance(label, str):
            raise _Unfit(f"the label must be text here, not {type(label).__name__}")
        return label
    parsed = _parsed(label) if isinstance(label, str) else label
    if form == "number":
        if isinstance(parsed, bool) or not isinstance(parsed, int | float):
            raise _Unfit("the label must be a JSON number here")
        return parsed
    if key is None:
        return parsed
    if not isinstance(parsed, dict) or key not in parsed:
        raise _Unfit(f"the label must be a JSON object with the key {key!r} here")
    return parsed[key]
