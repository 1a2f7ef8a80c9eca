"""Episodes: the item every interface sends (HTTP, ``assay batch``, MCP, the RL adapters), how a
label becomes one through a template, and the result each gets back.

One module reads items so that every interface refuses the same things the same way: paths only
inside the operator's root, unknown keys refused, an idempotency key bound to the work it stood
for. See docs/service.md for the format.
"""

from assay.episodes._item import Episode, item_id, parse_episode
from assay.episodes._judge import judge, judge_item
from assay.episodes._result import EpisodeResult
from assay.episodes._template import Template

__all__ = [
    "Episode",
    "EpisodeResult",
    "Template",
    "item_id",
    "judge",
    "judge_item",
    "parse_episode",
]
