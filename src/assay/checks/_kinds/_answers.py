"""Answer kinds over the final answer text: strict ones first, lenient ones for compatibility."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from assay._strict import StrictJSONError, loads_strict
from assay.checks._answer_key import score_answers
from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome, shorten
from assay.checks._patterns import PatternTimeout, search, validate_pattern
from assay.checks._registry import kind
from assay.checks._spec import NonBlank, Spec
from assay.status import Outcome


class ValueSpec(Spec):
    """A kind that compares the answer with one expected text."""

    value: NonBlank
    """The expected text; blank is refused (every answer contains the empty string)."""


@kind("answer_contains", ValueSpec)
def answer_contains(spec: ValueSpec, ctx: CheckContext) -> Outcome:
    """The answer contains ``value`` as a substring.

    Admits substring credit: "the answer is not 42" contains "42", and so does "1422". Kept for
    compatibility; prefer ``answer_one_of`` or ``answer_number``.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    if spec.value in answer:
        return Outcome.verified(f"the answer contains {shorten(spec.value)!r}")
    return Outcome.refuted(f"the answer does not contain {shorten(spec.value)!r}")


@kind("answer_equals", ValueSpec)
def answer_equals(spec: ValueSpec, ctx: CheckContext) -> Outcome:
    """The answer equals ``value`` exactly, after stripping surrounding whitespace on both sides.

    Case and inner whitespace matter. For several accepted spellings use ``answer_one_of``.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    if answer.strip() == spec.value.strip():
        return Outcome.verified("the answer equals the expected text")
    return Outcome.refuted(
        f"the answer {shorten(answer.strip())!r} is not exactly the expected text"
    )


class RegexSpec(Spec):
    """A kind that searches the answer with one author's pattern."""

    pattern: Annotated[str, AfterValidator(validate_pattern)]
    """A regular expression (``regex`` syntax) that cannot match empty text."""


@kind("answer_regex", RegexSpec)
def answer_regex(spec: RegexSpec, ctx: CheckContext) -> Outcome:
    """The answer contains a match of ``pattern`` (``regex`` syntax, searched with a time limit).

    Admits substring credit unless the pattern is anchored (``^...$``): an answer listing every
    candidate matches any one of them. A pattern that can match empty text is refused when the
    check is built; one that runs past the time limit is inconclusive, never a hang.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    try:
        found = search(spec.pattern, answer, ctx.config.regex_timeout)
    except PatternTimeout as exc:
        return Outcome.inconclusive(f"matching the answer: {exc}")
    if found is not None:
        return Outcome.verified(f"the answer matches {spec.pattern!r}")
    return Outcome.refuted(f"the answer has no match for {spec.pattern!r}")


class OneOfSpec(Spec):
    """A kind that accepts the whole answer only if it is one of a closed list."""

    values: list[NonBlank] = Field(min_length=1)
    """Accepted answers; the whole stripped answer must equal one of them."""
    case_sensitive: bool = True
    """False compares case-folded (``Paris`` matches ``PARIS``)."""


@kind("answer_one_of", OneOfSpec)
def answer_one_of(spec: OneOfSpec, ctx: CheckContext) -> Outcome:
    """The whole answer, stripped of surrounding whitespace, equals one of ``values``.

    No substring credit: "the answer is 42" is not "42", and neither is "not 42".
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    got = answer.strip()
    accepted = [v.strip() for v in spec.values]
    if spec.case_sensitive:
        matched = got in accepted
    else:
        folded = got.casefold()
        matched = any(folded == v.casefold() for v in accepted)
    if matched:
        return Outcome.verified("the answer is one of the accepted values")
    shown = ", ".join(repr(shorten(v, 40)) for v in accepted[:8])
    more = f" and {len(accepted) - 8} more" if len(accepted) > 8 else ""
    case = "" if spec.case_sensitive else " (ignoring case)"
    return Outcome.refuted(
        f"the answer {shorten(got, 80)!r} must be exactly one of {shown}{more}{case}, "
        "with nothing else around it"
    )


class AnswerKeySpec(Spec):
    """A kind whose answer is a JSON submission scored against a type-strict answer key."""

    key: dict[str, Any] = Field(min_length=1)
    """Task id -> expected value, compared type-strictly."""


@kind("answer_key", AnswerKeySpec)
def answer_key(spec: AnswerKeySpec, ctx: CheckContext) -> Outcome:
    """The answer is a JSON submission whose ``outputs`` match ``key`` exactly, task for task.

    The answer must be strict JSON ``{"outputs": {...}, "reported_reward": ...}``;
    ``reported_reward`` is ignored. Verified only at reward 1.0 with exact coverage of the key's
    task ids; the evidence carries the recomputed reward for partial credit.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    try:
        submission = loads_strict(answer)
    except StrictJSONError as exc:
        return Outcome.refuted(f"the answer is not a strict JSON submission: {exc}")
    score = score_answers(submission, spec.key)
    evidence = {"reward": score.reward, "accepted": score.accepted}
    if score.problem:
        return Outcome.refuted(f"the submission cannot be scored: {score.problem}", evidence)
    if score.accepted and score.reward == 1.0:
        return Outcome.verified(f"all {len(spec.key)} task outputs match the key", evidence)
    parts = []
    for label, ids in (("wrong", score.wrong), ("missing", score.missing), ("extra", score.extra)):
        if ids:
            listed = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
            parts.append(f"{label}: {listed}")
    verdict = (
        "not accepted (outputs must cover exactly the key's task ids)"
        if not score.accepted
        else f"reward {score.reward:g}"
    )
    return Outcome.refuted(f"{verdict}; " + "; ".join(parts), evidence)
