"""The base of every kind's spec, and the field types that refuse vacuous checks.

Specs are strict: unknown fields are rejected (a typo must not silently weaken a check), types
are not coerced (``"3"`` is not accepted where a number is required), and required text must not
be blank (an empty substring is contained in every answer).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]
"""Text a check compares against; empty or whitespace-only would make the check vacuous."""


class Spec(BaseModel):
    """Fields every kind accepts. Subclasses add their own."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True
    )

    weight: float = Field(1.0, gt=0, allow_inf_nan=False)
    """Share of the score in ``weighted`` mode."""
    description: str | None = None
    """What this check is for, in the author's words; shown with the outcome."""
