"""Safe YAML for authored files (problem folders, review protocols): no aliases, no duplicate
keys, no tags beyond plain data.

Kept here, below the platform, so the platform's folder loader and the protocol loader read
YAML one way.
"""

from __future__ import annotations

from typing import Any

import yaml

from assay._errors import InvalidInput


class _NoAliases(yaml.SafeLoader):
    """Safe YAML without aliases (a few lines of anchors expand to gigabytes once copied into
    canonical JSON) and without duplicate keys (YAML keeps the last one silently)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.constructor.ConstructorError(
                None, None, "aliases (*name) are not accepted", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(data: bytes, file: str) -> Any:
    """``data`` parsed as safe YAML; InvalidInput naming ``file`` and the line otherwise."""
    try:
        return yaml.load(data.decode("utf-8"), Loader=_NoAliases)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{file}: not UTF-8 (byte {exc.start})") from None
    except RecursionError:  # the parser recurses per level: a hostile file exhausts the stack
        raise InvalidInput(f"{file}: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "?"
        reason = getattr(exc, "problem", None) or str(exc)
        raise InvalidInput(f"{file}: {where}: {reason}") from None
