"""Judging an episode: never raises, so one item can never take down the batch it came in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay.episodes._item import Episode, item_id, parse_episode
from assay.episodes._result import EpisodeResult


def judge(episode: Episode) -> EpisodeResult:
    """Run the episode's checks; a failure inside assay is an ``error`` result, not an exception."""
    try:
        return EpisodeResult.of(episode.id, episode.task.run())
    except Exception as exc:  # the engine catches kinds' exceptions; this is its own failure
        message = f"assay failed judging this item: {type(exc).__name__}: {exc}"
        return EpisodeResult.invalid(episode.id, message)


def judge_item(
    data: Any,
    *,
    root: Path | None,
    config: Config,
    where: str = "item",
    workspaces: Path | None = None,
    from_json: bool = False,
) -> EpisodeResult:
    """Parse and judge one item; an invalid item is an ``error`` result naming its field
    (``from_json``: see ``parse_episode``)."""
    try:
        episode = parse_episode(
            data, root=root, config=config, where=where, workspaces=workspaces, from_json=from_json
        )
    except InvalidInput as exc:
        return EpisodeResult.invalid(item_id(data), str(exc))
    return judge(episode)
