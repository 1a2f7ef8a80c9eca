"""What every adapter shares: a label and a completion in, one ``EpisodeResult`` out.

A trainer calls a reward function thousands of times and cannot catch what it does not expect,
so ``Judge.judge`` never raises: a label that does not fit the template, a completion of a shape
assay cannot read, or a failure inside assay is an ``error`` result, never an exception and never
``verified``. What *is* raised is a mistake in the setup (a template file that does not load, a
root that is not a folder), at the moment the reward function is made, before any sample.

The template decides the checks; the completion is only ever the item's ``answer`` (text), so a
completion that holds ``{"checks": []}`` is judged as text and can never become the task.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay._strict import rebuild
from assay.episodes import EpisodeResult, Template, judge_item
from assay.status import Status

TEMPLATE_ENV = "ASSAY_TEMPLATE"
"""The environment variable naming the template file the module-level reward functions use."""
ROOT_ENV = "ASSAY_ROOT"
"""The environment variable naming the folder under which items may name files (workspaces,
verifier-side files); unset: an item that names a path is refused."""

TemplateSource = str | os.PathLike[str] | Template | Mapping[str, Any] | None
"""How a caller names a template: a file path, a loaded ``Template``, an inline JSON object, or
None (the ``ASSAY_TEMPLATE`` file when set, else each label is its own JSON task)."""

_REASON_CHARS = 500
"""A reason is a log column in every framework: long enough to act on, short enough to print."""


@dataclass(frozen=True)
class Judge:
    """A template, a root and the limits: what turns (label, completion) into a verdict.

    Picklable (plain data), so verl's ``prime`` manager can ship it to its worker processes.
    """

    template: Template
    root: Path | None
    config: Config

    def judge(self, *, label: Any, completion: Any, id: str = "sample") -> EpisodeResult:
        """The verdict on ``completion`` (text, or a chat message list: see ``completion_text``)
        against ``label``; never raises (see the module docstring)."""
        item_id = _clip_id(id)
        try:
            answer = completion_text(completion)
            if answer is None:
                return EpisodeResult.invalid(
                    item_id,
                    "completion: neither text nor a list of chat messages "
                    f"(got {type(completion).__name__})",
                )
            item = self.template.item(id=item_id, label=plain(label), answer=answer)
            return judge_item(item, root=self.root, config=self.config, where="sample")
        except Exception as exc:  # assay's own failure: the sample is masked, the loop goes on
            return EpisodeResult.invalid(
                item_id, f"assay failed judging this sample: {type(exc).__name__}: {exc}"
            )


def make_judge(
    template: TemplateSource = None,
    *,
    root: str | os.PathLike[str] | None = None,
    config: Config | None = None,
) -> Judge:
    """A ``Judge`` from what a user passes to an adapter's factory; InvalidInput names what is
    wrong (the template file, ``ASSAY_TEMPLATE``, the root). Unset arguments read the
    environment: ``ASSAY_TEMPLATE``, ``ASSAY_ROOT`` and the ``ASSAY_*`` limits."""
    return Judge(
        template=_template(template),
        root=_root(root if root is not None else os.environ.get(ROOT_ENV) or None),
        config=config if config is not None else Config.from_env(),
    )


def default_judge(template: TemplateSource = None) -> Judge:
    """The judge of the module-level reward functions: made on first use, then reused while the
    template argument and the environment (``ASSAY_TEMPLATE``, ``ASSAY_ROOT``) stay the same."""
    if template is None or isinstance(template, str | os.PathLike):
        key = None if template is None else os.fspath(template)
        return _cached_judge(key, os.environ.get(TEMPLATE_ENV), os.environ.get(ROOT_ENV))
    return make_judge(template)


@functools.lru_cache(maxsize=16)
def _cached_judge(template: str | None, env_template: str | None, env_root: str | None) -> Judge:
    del env_template, env_root  # part of the cache key: make_judge reads them itself
    return make_judge(template)


def _template(source: TemplateSource) -> Template:
    if isinstance(source, Template):
        return source
    if isinstance(source, Mapping):
        return Template.from_json(dict(source), where="template")
    if source is None:
        from_env = os.environ.get(TEMPLATE_ENV)
        if not from_env:
            return Template.labels_are_tasks()
        try:
            return Template.load(Path(from_env))
        except InvalidInput as exc:
            raise InvalidInput(f"{TEMPLATE_ENV}={from_env}: {exc}", where=TEMPLATE_ENV) from None
    return Template.load(Path(os.fspath(source)))


def _root(root: str | os.PathLike[str] | None) -> Path | None:
    if root is None:
        return None
    path = Path(os.fspath(root))
    if not path.is_dir():
        raise InvalidInput(f"{path} is not a folder", where="root")
    return path.resolve()


def plain(value: Any) -> Any:
    """``value`` as plain JSON-shaped data: mappings as dicts, sequences as lists, numpy arrays
    and scalars through their ``tolist()``. A label read from parquet (verl's datasets) is a
    dict of numpy arrays, not the lists a task is made of; text stays text, nothing else
    changes, nothing is evaluated. A subclass of a plain type (``np.float64``, ``np.str_``, an
    ``IntEnum``) becomes its plain value: the answer kinds compare types strictly, and the same
    label sent as JSON would arrive plain."""
    return rebuild(value, _plain_node)


def _plain_node(value: Any) -> tuple[Any, bool]:
    """One node of ``plain``: its plain value, or the container to descend into."""
    if value is None or type(value) in (str, bytes, int, float, bool):
        return value, False
    tolist = getattr(type(value), "tolist", None)
    if callable(tolist):  # a numpy array or scalar: its Python lists and scalars, made plain
        return _plain_node(tolist(value))
    if isinstance(value, bool):  # before int: it is one
        return bool(value), False
    if isinstance(value, int):
        return int(value), False
    if isinstance(value, float):
        return float(value), False
    if isinstance(value, str):
        return str(value), False
    if isinstance(value, bytes):
        return bytes(value), False
    return value, isinstance(value, Mapping | list | tuple)


def _clip_id(id: str) -> str:
    """An item id assay accepts (1..200 characters), whatever the framework calls the sample."""
    return str(id)[:200] or "sample"


def reason(result: EpisodeResult) -> str:
    """One line saying why the item is not verified ("" when it is): the first outcome that did
    not pass, its kind first, clipped for a log column."""
    if result.status is Status.VERIFIED:
        return ""
    for outcome in result.outcomes:
        if outcome.status is not Status.VERIFIED:
            kind = f"{outcome.kind}: " if outcome.kind else ""
            return (kind + outcome.detail)[:_REASON_CHARS]
    return result.status.label


def completion_text(completion: Any) -> str | None:
    """The answer in a completion: the text itself, or the content of the last assistant message
    of a message list (dicts or message objects; a content of parts is the join of its text
    parts). None when the completion has neither shape: the caller sent something assay cannot
    read, which is an ``error``, not a finding about the work."""
    if isinstance(completion, str):
        return completion
    if not isinstance(completion, Sequence) or isinstance(completion, bytes | bytearray):
        return None
    for message in reversed(completion):
        role = _field(message, "role")
        if role is None:
            return None
        if role == "assistant":
            return _content_text(_field(message, "content"))
    return ""  # no assistant message: the model said nothing


def _field(message: Any, name: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(name)
    return getattr(message, name, None)


def _content_text(content: Any) -> str | None:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        texts = [_field(part, "text") for part in content if _field(part, "type") == "text"]
        if all(isinstance(text, str) for text in texts):
            return "".join(texts)
    return None
