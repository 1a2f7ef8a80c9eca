"""``web_receipt``: a cited source counts only if the retrieval provider actually served it."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome
from assay.checks._registry import kind
from assay.checks._spec import Spec
from assay.status import Outcome

_MARKDOWN = re.compile(r"\[[^\]]*\]\(\s*<?(https?://[^\s)>]+)>?\s*\)", re.IGNORECASE)
_ANGLE = re.compile(r"<(https?://[^\s>]+)>", re.IGNORECASE)
_BARE = re.compile(r"https?://[^\s<>\"'`\[\]{}|\\^]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\""
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_url(url: str) -> str | None:
    """Scheme and host lower-cased, default port and fragment dropped; path and query exact.

    An empty path is "/" (both are the same request); otherwise a trailing slash is a different
    URL, and http and https differ. Returns None for text that is not an http(s) URL.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = (userinfo + "@" if userinfo else "") + host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def cited_urls(text: str) -> list[str]:
    """URLs cited in prose, in markdown links ``[t](url)`` and in ``<url>``, in order, once each."""
    found: list[tuple[int, str]] = []
    covered: list[tuple[int, int]] = []
    for pattern in (_MARKDOWN, _ANGLE):
        for match in pattern.finditer(text):
            found.append((match.start(1), match.group(1)))
            covered.append(match.span(1))
    for match in _BARE.finditer(text):
        if any(start <= match.start() < end for start, end in covered):
            continue
        found.append((match.start(), match.group(0).rstrip(_TRAILING)))
    seen: dict[str, None] = {}
    for _, url in sorted(found):
        canonical = canonical_url(url)
        if canonical is not None:
            seen.setdefault(canonical)
    return list(seen)


class ReceiptSpec(Spec):
    min_citations: int = Field(1, ge=1)
    """Distinct cited URLs required; an answer that cites nothing never passes."""


@kind("web_receipt", ReceiptSpec)
def web_receipt(spec: ReceiptSpec, ctx: CheckContext) -> Outcome:
    """Every URL cited in the answer was served (2xx) by the retrieval provider in this episode.

    Receipts come from the provider, never from the policy; a failed fetch serves nothing. URLs
    compare after canonicalisation (see ``canonical_url``). Passing says the sources were served,
    not that they support the answer.
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    cited = cited_urls(answer)
    served = {
        canonical
        for receipt in ctx.receipts
        if 200 <= receipt.status < 300 and (canonical := canonical_url(receipt.url)) is not None
    }
    evidence = {"cited": cited, "served": sorted(served)}
    if len(cited) < spec.min_citations:
        return Outcome.refuted(
            f"the answer cites {len(cited)} distinct URL(s); at least {spec.min_citations} required",
            evidence,
        )
    unserved = [url for url in cited if url not in served]
    if unserved:
        listed = ", ".join(unserved[:10]) + (
            f" and {len(unserved) - 10} more" if len(unserved) > 10 else ""
        )
        return Outcome.refuted(
            f"{len(unserved)} cited URL(s) were not served during the episode: {listed}; "
            "cite only sources that were retrieved",
            evidence,
        )
    return Outcome.verified(f"all {len(cited)} cited URL(s) were served", evidence)
