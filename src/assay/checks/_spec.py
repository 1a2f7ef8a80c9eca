"""The base of every kind's spec, and the field types that refuse vacuous checks.

Specs are strict: unknown fields are rejected (a typo must not silently weaken a check), types
are not coerced (``"3"`` is not accepted where a number is required), and required text must not
be blank (an empty substring is contained in every answer).

Each spec also says which of its fields name files, and on which side: ``verifier_fields`` name
files beside the task (``CheckContext.base_dir``; in a contract, reference keys) that the work
must never be able to write, and ``workspace_fields`` name paths in the workspace (in a contract,
artifact roles). The platform reads them to refuse, at publish time, a contract whose check names
a key or role it does not declare, and to know which checks read a sealed reference.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

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

    verifier_fields: ClassVar[tuple[str, ...]] = ()
    """Fields whose values name verifier-side files, relative to ``CheckContext.base_dir``."""
    workspace_fields: ClassVar[tuple[str, ...]] = ()
    """Fields whose values name paths in the workspace."""
    private_fields: ClassVar[tuple[str, ...]] = ()
    """Fields whose values the work being checked must never see (a hidden check's code): a
    published contract shows them as withheld."""
    runs_code: ClassVar[bool] = False
    """True for kinds that run code in the sandbox (seconds, not microseconds): a service sends
    them to its bounded pool instead of judging them inline."""

    weight: float = Field(1.0, gt=0, allow_inf_nan=False)
    """Share of the score in ``weighted`` mode."""
    description: str | None = None
    """What this check is for, in the author's words; shown with the outcome."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """A declaration naming no field of the spec is a bug in the kind: fail at import."""
        super().__pydantic_init_subclass__(**kwargs)
        unknown = [
            name
            for name in (*cls.verifier_fields, *cls.workspace_fields)
            if name not in cls.model_fields
        ]
        if unknown:
            raise TypeError(f"{cls.__name__} declares file fields it does not have: {unknown}")

    def verifier_files(self) -> list[str]:
        """The verifier-side files this check names, in field order (unset fields skipped)."""
        return _named(self, self.verifier_fields)

    def workspace_files(self) -> list[str]:
        """The workspace paths this check names, in field order (unset fields skipped)."""
        return _named(self, self.workspace_fields)


def _named(spec: Spec, fields: tuple[str, ...]) -> list[str]:
    """The paths held by ``fields``: a str, each str of a list, a dict's values; None skipped."""
    found: list[str] = []
    for name in fields:
        value = getattr(spec, name)
        if value is None:
            continue
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found.extend(value.values())
        else:
            found.extend(value)
    return found
