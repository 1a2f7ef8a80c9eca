"""Plots drawn on the server as inline SVG, by hand: a dot at each estimate and a line across
its 95 % interval (dot-and-whisker), one row per figure, with the number printed beside it.

Why by hand: the pages send ``Content-Security-Policy: default-src 'self'`` and load no
script, so a chart library (JavaScript, a CDN, a new dependency) is out; a few rectangles,
lines and text elements are all these charts need. Every chart carries a ``<title>`` and a
``<desc>`` (read by screen readers through ``aria-labelledby``) and only presentation
attributes (no ``style=``, which the policy forbids). The page prints the same numbers in a
table beside each chart: the picture is for looking, the table for reading.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH = 520
"""The viewBox's width; the SVG scales to its container (``width="100%"``)."""
LEFT, RIGHT = 14, 506
ROW = 60
"""A row: its label, then its numbers, then the dot and whisker."""
TOP = 8
AXIS = 30
INK, MUTED, LINE, DOT, ZERO = "#1b1f24", "#57606a", "#d0d7de", "#0550ae", "#a40e26"
FONT = "system-ui, sans-serif"


@dataclass(frozen=True)
class Point:
    """One row of a chart: what it is, the estimate and its interval, the text printed."""

    label: str
    value: float | None
    """None: no estimate (nothing to draw; ``text`` says why)."""
    low: float | None
    high: float | None
    text: str


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering ``[low, high]``."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 2.5, 5, 10) if s * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    found = []
    value = first
    while value <= high + 1e-9:
        found.append(round(value, 10))
        value += step
    return found


def _number(value: float) -> str:
    return f"{value:g}"


def interval_chart(
    ident: str,
    title: str,
    desc: str,
    points: Sequence[Point],
    low: float,
    high: float,
    zero: float | None = None,
) -> Markup:
    """A dot-and-whisker chart of ``points`` on the axis ``[low, high]`` (values outside are
    clipped to its ends, and the printed text still says the exact numbers); ``zero``: a
    dashed reference line (e.g. kappa 0, agreement no better than chance). ``ident`` makes the
    title/desc ids unique on the page."""
    if high <= low:
        high = low + 1.0

    def x(value: float) -> float:
        clipped = min(max(value, low), high)
        return round(LEFT + (clipped - low) / (high - low) * (RIGHT - LEFT), 2)

    height = TOP + ROW * len(points) + AXIS
    bottom = TOP + ROW * len(points)
    said = " ".join(f"{p.label}: {p.text}." for p in points)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="100%" '
        f'viewBox="0 0 {WIDTH} {height}" aria-labelledby="{ident}-title {ident}-desc" '
        f'font-family="{FONT}" font-size="13">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(desc)} {escape(said)}</desc>',
    ]
    for tick in ticks(low, high):
        tx = x(tick)
        parts.append(
            f'<line x1="{tx}" y1="{TOP}" x2="{tx}" y2="{bottom}" stroke="{LINE}" stroke-width="1"/>'
        )
        parts.append(
            f'<text x="{tx}" y="{bottom + 16}" text-anchor="middle" fill="{MUTED}">'
            f"{escape(_number(tick))}</text>"
        )
    if zero is not None and low <= zero <= high:
        zx = x(zero)
        parts.append(
            f'<line x1="{zx}" y1="{TOP}" x2="{zx}" y2="{bottom}" stroke="{ZERO}" '
            f'stroke-width="1" stroke-dasharray="4 3"/>'
        )
    parts.append(
        f'<line x1="{LEFT}" y1="{bottom}" x2="{RIGHT}" y2="{bottom}" stroke="{MUTED}" '
        f'stroke-width="1"/>'
    )
    for row, point in enumerate(points):
        top = TOP + ROW * row
        parts.append(f'<g class="row" data-label="{escape(point.label)}">')
        parts.append(
            f'<text x="{LEFT}" y="{top + 14}" fill="{INK}">{escape(_short(point.label))}</text>'
        )
        parts.append(
            f'<text x="{LEFT}" y="{top + 31}" fill="{INK}" font-weight="600">'
            f"{escape(point.text)}</text>"
        )
        middle = top + 46
        if point.low is not None and point.high is not None:
            parts.append(
                f'<line x1="{x(point.low)}" y1="{middle}" x2="{x(point.high)}" y2="{middle}" '
                f'stroke="{DOT}" stroke-width="2"/>'
            )
            for end in (point.low, point.high):
                parts.append(
                    f'<line x1="{x(end)}" y1="{middle - 5}" x2="{x(end)}" y2="{middle + 5}" '
                    f'stroke="{DOT}" stroke-width="2"/>'
                )
        if point.value is not None:
            parts.append(
                f'<circle cx="{x(point.value)}" cy="{middle}" r="5" fill="{DOT}" '
                f'stroke="#fff" stroke-width="1.5"/>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return Markup("\n".join(parts))


def _short(label: str, limit: int = 72) -> str:
    """A label that fits its line (the table beside the chart gives it whole)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"
