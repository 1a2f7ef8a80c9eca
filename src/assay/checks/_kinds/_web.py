"""``web_receipt``: a cited source counts only if the retrieval provider actually served it."""

from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome
from assay.checks._registry import kind
from assay.checks._spec import Spec
from assay.status import Outcome

# A URL runs to the next space or <, >, ": a browser keeps \ ' ^ | { ` (and reads \ as /), so
# cutting there could make an unserved URL equal a served one.
_URL_CHARS = r"[^\s<>\"]"
_SCHEME_URL = re.compile(rf"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://{_URL_CHARS}*")
# A source written inline: its content is the "page", never served.
_DATA_URL = re.compile(r"(?<![\w.+-])data:(?=[a-z]+/|[;,])[^\s<>\"]+", re.IGNORECASE)
# One slash, or backslashes, after http(s): browsers still go to the host ("http:/evil.example").
_LOOSE_SLASHES = re.compile(r"(?<![A-Za-z0-9+.-])(https?):[/\\]+(?=[^/\\\s])", re.IGNORECASE)
# Defanged dots ("evil[.]com", "evil(dot)com") and the ideographic full stop IDNA reads as ".".
_DEFANGED = re.compile(r"\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\u3002", re.IGNORECASE)
_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0x1BCA0, 0x1BCA3),
    (0xE0000, 0xE0FFF),
)
"""Default-ignorable code points that are not format characters (Cf): IDNA drops them from a
host, so "evil\u034f.example" is evil.example."""
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_TLD = r"(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59})"
# A host named without a scheme: "//host...", "www.host...", "host/path", "host:port", or a bare
# domain under a common top-level domain. Not after "@" (an email names a mailbox) or a word.
_SCHEMELESS = re.compile(
    rf"""(?:(?<=//)|(?<![\w/])(?<![\w@]\.)(?<![\w@]-))(?P<slashes>//)?
    (?P<host>(?:{_LABEL}\.)+{_TLD}(?![\w-])|[0-9]{{1,3}}(?:\.[0-9]{{1,3}}){{3}}(?=[:/])
      |localhost(?![\w-])|[^\W\d_][\w-]{{0,62}}(?=:[0-9]{{1,5}}[/?\#]))
    (?P<rest>(?::[0-9]{{1,5}})?[/?#]{_URL_CHARS}*|:[0-9]{{1,5}}(?![\w.]))?""",
    re.IGNORECASE | re.VERBOSE,
)
_COMMON_TLDS = frozenset(
    [
        "com",
        "org",
        "net",
        "edu",
        "gov",
        "mil",
        "int",
        "io",
        "co",
        "ai",
        "dev",
        "app",
        "info",
        "biz",
        "me",
        "us",
        "uk",
        "ca",
        "au",
        "de",
        "fr",
        "jp",
        "cn",
        "ru",
        "in",
        "eu",
        "nl",
        "se",
        "no",
        "es",
        "it",
        "ch",
        "br",
        "kr",
        "tw",
        "nz",
        "za",
        "pl",
        "be",
        "at",
        "dk",
        "fi",
        "ie",
        "il",
        "mx",
        "ar",
        "gr",
        "pt",
        "cz",
        "hu",
        "ro",
        "tr",
        "ua",
        "ir",
        "id",
        "sg",
        "hk",
        "vn",
        "th",
        "my",
        "ph",
        "pk",
        "bd",
        "ng",
        "ke",
        "eg",
        "sa",
        "ae",
        "xyz",
        "site",
        "online",
        "tech",
        "wiki",
        "news",
        "blog",
    ]
)
_TRAILING = ".,;:!?)]}'\"`*_"
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


def _without_scheme(canonical: str) -> str:
    """``https://host/p`` -> ``//host/p``: what a citation written without a scheme can name."""
    return "//" + canonical.partition("://")[2]


def _schemeless_key(host: str, rest: str) -> str:
    """A citation written without a scheme, as ``//host[:port]/path?query`` (80 and 443 dropped)."""
    canonical = canonical_url(f"http://{host}{rest}")
    if canonical is None:
        return f"//{host.lower()}{rest}"
    key = _without_scheme(canonical)
    hostpart, slash, path = key[2:].partition("/")
    if hostpart.endswith(":443"):
        key = "//" + hostpart[:-4] + slash + path
    return key


def _ignorable(char: str) -> bool:
    if unicodedata.category(char) == "Cf":
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _IGNORABLE)


def _prepared(text: str) -> str:
    """The text as a reader or browser takes it: HTML entities decoded (``evil&#46;com``), NFKC
    (fullwidth ``ｈｔｔｐｓ：／／`` is ``https://``), invisible characters IDNA ignores removed,
    ideographic full stops and defanged dots (``[.]``, ``(dot)``) read as ``.``, and
    ``http:/host`` read as ``http://host``."""
    if "&" in text:
        text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(c for c in text if c.isascii() or not _ignorable(c))
    if "[" in text or "(" in text or "{" in text or "\u3002" in text:
        text = _DEFANGED.sub(".", text)
    if ":" in text:
        text = _LOOSE_SLASHES.sub(r"\1://", text)
    return text


def cited_urls(text: str) -> list[str]:
    """Every citation in the text, in order, once each; anything that names a host counts.

    After reading the text as a browser would (see ``_prepared``), a citation is a ``data:`` URL,
    a URL with any scheme, running to the next space or ``<>"`` (``https://...``, ``ftp://...``; an http(s) URL is given in canonical form, another
    scheme as written), or a host named without a scheme (given as ``//host/path``): ``//host``,
    ``www.host``, a dotted host whose last label is alphabetic followed by a path, port or query
    (``example.org/x``, ``report.example:8080``), or a bare domain under a common top-level domain
    (``example.org``). Markdown links and ``<url>`` are found the same way. A citation written
    without a scheme that names the same host and path as an http(s) citation is the same source.
    """
    text = _prepared(text)
    found: list[tuple[int, str]] = []
    covered: list[tuple[int, int]] = []
    for match in (*_SCHEME_URL.finditer(text), *_DATA_URL.finditer(text)):
        url = match.group(0).rstrip(_TRAILING)
        covered.append((match.start(), match.start() + len(url)))
        found.append((match.start(), canonical_url(url) or url))
    for match in _SCHEMELESS.finditer(text):
        if any(start <= match.start() < end for start, end in covered):
            continue
        host, rest = match.group("host"), (match.group("rest") or "").rstrip(_TRAILING)
        if match.start() and text[match.start() - 1] == "@" and not rest:
            continue  # an email names a mailbox; "served.org@evil.com/x" names evil.com
        named = (
            match.group("slashes")
            or rest
            or host.lower().startswith("www.")
            or host.lower() == "localhost"
            or host.rpartition(".")[2].lower() in _COMMON_TLDS
        )
        if named:
            found.append((match.start(), _schemeless_key(host, rest)))
    seen: dict[str, None] = {}
    schemes = {_without_scheme(url) for _, url in found if canonical_url(url) is not None}
    for _, url in sorted(found):
        if url.startswith("//") and url in schemes:
            continue  # the same source as an http(s) citation of it
        seen.setdefault(url)
    return list(seen)


def _is_served(url: str, served: set[str], served_hosts: set[str]) -> bool:
    if url.startswith("//"):
        return url in served_hosts
    return url in served


class ReceiptSpec(Spec):
    """How many distinct served sources an answer must cite."""

    min_citations: int = Field(1, ge=1)
    """Distinct cited URLs required; an answer that cites nothing never passes."""


@kind("web_receipt", ReceiptSpec)
def web_receipt(spec: ReceiptSpec, ctx: CheckContext) -> Outcome:
    """Every source cited in the answer was served (2xx) by the retrieval provider in this episode.

    Anything that names a host is a citation (see ``cited_urls``): ``https://...``, another
    scheme, ``//host/x``, ``www.host/x``, ``host.org/x``, fullwidth or markdown forms alike, so an
    unserved source cannot hide in a form the check does not read. Receipts come from the
    provider, never from the policy; a failed fetch serves nothing. URLs compare after
    canonicalisation (see ``canonical_url``); a citation without a scheme is served when a served
    URL has the same host, path and query. Passing says the sources were served, not that they
    support the answer.
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
    served_hosts = {_without_scheme(url) for url in served}
    unserved = [url for url in cited if not _is_served(url, served, served_hosts)]
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
