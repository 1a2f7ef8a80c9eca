"""Getting past the sign-in rate limits, or turning them on someone else (helper
"adv-webarchive").

- **Concurrency.** The limit used to be checked, then the token looked up (a ledger read, in a
  thread), then the failure recorded: every request in flight at once passed the check, so 100
  concurrent guesses were all looked at (100 answers of 401 where the limit is 20). The window
  now takes a slot before the token is read and gives it back when the token is right.
- **Addresses.** An IPv6 host usually holds a whole /64: keyed by its full address it had 2**64
  allowances; now keyed by its /64 (an IPv4-mapped address by its IPv4 one). Headers a client
  writes (``X-Forwarded-For``, ``X-Real-IP``, ``Forwarded``) are not read by the app.
- **Memory.** A flood of distinct addresses keeps at most ``max_keys`` keys.
- **The real server**: ``assay serve`` ran uvicorn with its default ``proxy_headers=True``,
  which trusts ``X-Forwarded-For`` from 127.0.0.1: a client on the host, or any client through
  a reverse proxy on the host that passed the header on, chose its address (rotating it
  bypassed the per-address limit; naming a victim's address locked the victim out). Now the
  headers are read only from a proxy named with ``--proxy``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assay.platform import Platform
from assay.web._throttle import Limit, LoginLimits, Window, client_of
from tests.adversarial.web_attacks import site_for
from tests.web.conftest import Site

LOGIN_CSRF = "c" * 43
"""The login form's double-submit value: any value, the same in the cookie and the field."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    yield from site_for(tmp_path_factory.mktemp("throttle"))


@pytest.fixture(autouse=True)
def fresh_limits(site: Site) -> None:
    """Each test starts with empty windows (the defaults: 20 failures, 30 sessions)."""
    site.app.state.web.limits = LoginLimits()


def statuses(
    site: Site, host: str, requests: list[tuple[str, str, dict[str, object]]]
) -> Counter[int]:
    """Send every request at once from ``host`` (one event loop, as many in flight as asked)."""

    async def go() -> list[int]:
        transport = httpx.ASGITransport(app=site.app, client=(host, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            sent = [c.request(method, url, **options) for method, url, options in requests]  # type: ignore[arg-type]
            return [r.status_code for r in await asyncio.gather(*sent)]

    return Counter(asyncio.run(go()))


def form_guess(i: int) -> tuple[str, str, dict[str, object]]:
    return (
        "POST",
        "/login",
        {
            "data": {"csrf": LOGIN_CSRF, "token": f"guess-{i}", "next": "/problems"},
            "headers": {"Cookie": f"assay_login={LOGIN_CSRF}"},
        },
    )


def api_guess(i: int, **headers: str) -> tuple[str, str, dict[str, object]]:
    return ("GET", "/v1/me", {"headers": {"Authorization": f"Bearer guess-{i}", **headers}})


@pytest.mark.parametrize("where", ["form", "api"])
def test_concurrent_guesses_get_no_more_than_the_limit_looked_at(site: Site, where: str) -> None:
    guess = form_guess if where == "form" else api_guess
    seen = statuses(site, "192.0.2.10", [guess(i) for i in range(100)])
    assert seen[401] <= 20 and seen[401] + seen[429] == 100, seen


@pytest.mark.parametrize("last", ["form", "api"])
def test_form_and_bearer_failures_share_one_window(site: Site, last: str) -> None:
    """Ten wrong tokens on the form and ten as bearer tokens are twenty failures: switching
    between the two doors gives no fresh allowance."""
    host = f"192.0.2.{20 if last == 'form' else 21}"
    mixed = [form_guess(i) for i in range(10)] + [api_guess(i) for i in range(10)]
    assert statuses(site, host, mixed) == Counter({401: 20})
    after = statuses(site, host, [form_guess(99) if last == "form" else api_guess(99)])
    assert after == Counter({429: 1}), after


def test_a_right_token_in_the_same_burst_is_not_counted_as_a_failure(site: Site) -> None:
    good = ("GET", "/v1/me", {"headers": {"Authorization": f"Bearer {site.tokens['alice']}"}})
    seen = statuses(site, "192.0.2.11", [good] * 40)
    assert seen == Counter({200: 40}), seen
    assert statuses(site, "192.0.2.11", [api_guess(i) for i in range(20)]) == Counter({401: 20})


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        ("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe", True),  # one /64
        ("2001:db8:1:2::1", "2001:db8:1:3::1", False),  # the next /64
        ("::ffff:198.51.100.4", "198.51.100.4", True),  # IPv4-mapped is the IPv4 host
        ("198.51.100.5", "198.51.100.6", False),
    ],
)
def test_an_address_family_trick_does_not_give_a_fresh_allowance(
    site: Site, first: str, second: str, shared: bool
) -> None:
    assert statuses(site, first, [api_guess(i) for i in range(20)]) == Counter({401: 20})
    after = statuses(site, second, [api_guess(99)])
    assert after == Counter({429: 1} if shared else {401: 1}), after


@pytest.mark.parametrize("header", ["X-Forwarded-For", "X-Real-IP", "Forwarded"])
def test_a_client_s_own_address_headers_are_not_read(site: Site, header: str) -> None:
    def spoofed(i: int) -> tuple[str, str, dict[str, object]]:
        value = f"for=203.0.113.{i}" if header == "Forwarded" else f"203.0.113.{i}"
        return api_guess(i, **{header: value})

    seen = Counter()
    for i in range(25):  # one at a time: each answer is known before the next guess
        seen += statuses(site, "192.0.2.12", [spoofed(i)])
    assert seen == Counter({401: 20, 429: 5}), seen
    assert statuses(site, "192.0.2.13", [spoofed(1)]) == Counter({401: 1})  # not locked out


def test_a_flood_of_addresses_keeps_the_windows_bounded() -> None:
    window = Window(Limit(20, 300.0), max_keys=1000)
    for i in range(5000):
        window.record(client_of(f"2001:db8:{i // 65536:x}:{i % 65536:x}::1"))
    assert len(window._events) == 1000
    one = Window(Limit(20, 300.0), max_keys=1000)
    for i in range(5000):  # every address of one /64 is one key
        one.record(client_of(f"2001:db8::{i:x}"))
    assert len(one._events) == 1 and len(one._events["2001:db8::/64"]) == 20


def test_sessions_per_user_hold_under_a_burst_of_right_tokens(site: Site) -> None:
    """Each right login writes a session to the ledger; a burst of them with the same token
    (or its spaced variants, which are the same token) starts no more than the limit."""
    site.app.state.web.limits = LoginLimits(sessions=Window(Limit(3, 3600.0)))
    with Platform.open(site.config) as platform:
        before = len(platform.ledger.find(kind="web.session.started"))
    token = site.tokens["bob"]
    burst = [
        (
            "POST",
            "/login",
            {
                "data": {"csrf": LOGIN_CSRF, "token": variant, "next": "/problems"},
                "headers": {"Cookie": f"assay_login={LOGIN_CSRF}"},
            },
        )
        for variant in [token, f" {token}", f"{token} ", f"\t{token}\n"] * 3
    ]
    seen = statuses(site, "192.0.2.14", burst)
    assert seen[303] == 3 and seen[429] == 9, seen
    with Platform.open(site.config) as platform:
        assert len(platform.ledger.find(kind="web.session.started")) == before + 3


@pytest.mark.slow
def test_the_real_server_does_not_take_a_client_s_word_for_its_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.service.test_serve_cli import serve

    monkeypatch.setenv("ASSAY_DB", f"sqlite:///{tmp_path / 'assay.db'}")
    with serve(cwd=tmp_path) as (url, _):
        seen = Counter()
        for i in range(21):
            answer = httpx.get(
                f"{url}/v1/me",
                headers={"Authorization": f"Bearer guess-{i}", "X-Forwarded-For": f"203.0.113.{i}"},
                timeout=10,
            )
            seen[answer.status_code] += 1
    assert seen == Counter({401: 20, 429: 1}), seen


@pytest.mark.parametrize(
    "path", ["/v1/campaigns", "/v1/campaigns/cmp-0123456789abcdef", "/v1/reports/review"]
)
def test_every_v1_door_counts_against_the_same_window(site: Site, path: str) -> None:
    """The campaign and report routes read the bearer token too: they used a copy of the
    token lookup without the sign-in count, so guesses there were never limited (lead, session
    6). Twenty wrong tokens through them, then the next guess anywhere is 429."""
    host = f"192.0.2.{40 + len(path) % 50}"
    guesses = [
        ("GET", path, {"headers": {"Authorization": f"Bearer guess-{i}"}}) for i in range(20)
    ]
    assert statuses(site, host, guesses) == Counter({401: 20})
    assert statuses(site, host, [api_guess(99)]) == Counter({429: 1})
