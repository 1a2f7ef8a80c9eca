"""Sign-in rate limits (``assay.web._throttle``): a sliding window per key, bounded in keys;
failed sign-ins per client on the login form and as bad bearer tokens on ``/v1`` (429 with
Retry-After, refused before the token is looked at, so even the right token waits; sign-ins
in flight are waited for, not counted as failures); sessions
started per user."""

from __future__ import annotations

import threading
import time
from typing import Any

from starlette.testclient import TestClient

from assay.platform import Platform
from assay.web._throttle import Limit, LoginLimits, Window
from tests.web.conftest import Site
from tests.web.test_pages import csrf_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_window_counts_per_key_slides_and_forgets_the_oldest_keys() -> None:
    clock = Clock()
    window = Window(Limit(3, 60), max_keys=2, clock=clock)
    for _ in range(3):
        assert window.wait("a") == 0
        window.record("a")
        clock.now += 10
    assert window.wait("a") == 30  # the first event (t=1000) leaves the window at t=1060
    assert window.wait("b") == 0  # another key is not held back
    clock.now += 29.5
    assert window.wait("a") == 1  # never 0 while refused
    clock.now += 0.5
    assert window.wait("a") == 0
    window.record("b")
    window.record("c")  # a third key: the least recently used ("a") is forgotten
    assert set(window._events) == {"b", "c"}
    for _ in range(100):
        window.record("c")
    assert len(window._events["c"]) == 3  # events per key are bounded too


def test_a_take_waits_for_undecided_events_and_refuses_on_decided_ones() -> None:
    """A window full of events still being decided makes a ``take`` wait for them: given
    back, the waiting take gets its slot; counted, it is refused (and a take with no patience
    is refused at once either way)."""
    window = Window(Limit(2, 60))
    assert window.take("a") == 0 and window.take("a") == 0
    assert window.take("a") > 0  # no patience: refused while undecided
    results: list[int] = []
    waiting = threading.Thread(target=lambda: results.append(window.take("a", patience=30)))
    waiting.start()
    time.sleep(0.2)
    assert results == []  # still waiting on the two undecided events
    window.settle("a", counts=True)
    window.settle("a", counts=False)  # a right token: its slot is given to the waiting take
    waiting.join(30)
    assert results == [0]
    window.settle("a", counts=True)
    started = time.monotonic()
    assert window.take("a", patience=30) > 0  # full of decided failures: refused at once
    assert time.monotonic() - started < 5


def sessions(site: Site) -> int:
    with Platform.open(site.config) as platform:
        return len(platform.ledger.find(kind="web.session.started"))


def attempt(api: TestClient, token: str) -> Any:
    return api.post("/login", data={"csrf": csrf_of(api.get("/login").text), "token": token})


def test_failed_sign_ins_per_client_are_limited_on_the_form_and_the_api(
    api: TestClient, site: Site
) -> None:
    site.app.state.web.limits = LoginLimits(failures=Window(Limit(3, 300)))
    for _ in range(3):
        assert api.get("/v1/me").status_code == 401  # no token at all is not a guess
    for _ in range(2):
        assert attempt(api, "guess").status_code == 401
    assert api.get("/v1/me", headers={"Authorization": "Bearer guess"}).status_code == 401
    refused = attempt(api, site.tokens["alice"])  # the right token, from the same client
    assert refused.status_code == 429 and "Too many failed sign-ins" in refused.text
    assert 0 < int(refused.headers["retry-after"]) <= 300
    assert sessions(site) == 0
    also = api.get("/v1/me", headers=site.auth("alice"))
    assert also.status_code == 429 and int(also.headers["retry-after"]) > 0
    site.app.state.web.limits = LoginLimits()  # a fresh window: the same token works
    assert attempt(api, site.tokens["alice"]).status_code == 200
    assert sessions(site) == 1


def test_sessions_per_user_are_limited(api: TestClient, site: Site) -> None:
    site.app.state.web.limits = LoginLimits(sessions=Window(Limit(2, 3600)))
    for _ in range(2):
        assert attempt(api, site.tokens["alice"]).status_code == 200
    refused = attempt(api, site.tokens["alice"])
    assert refused.status_code == 429 and "Too many sign-ins as alice" in refused.text
    assert int(refused.headers["retry-after"]) > 3500
    assert attempt(api, site.tokens["bob"]).status_code == 200  # another user is not held
    assert sessions(site) == 3
