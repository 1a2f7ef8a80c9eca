"""A response that passes a glance but should not count: a verdict smuggled in a look-alike
key, a non-string verdict, duplicate keys, non-finite numbers, citations that only resemble a
material's URI, a declaration of assistance hiding a verdict. Each is refused (the seat stays
claimed) or counted as what it really says (regressions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.status import Status
from tests.platform.conftest import Clock
from tests.review.helpers import answer, publish, seats_of, single, sqlite_platform, users


def _forms(uri: str) -> dict[str, bytes]:
    good = json.loads(answer("pass", uri))

    def with_(**change: Any) -> bytes:
        return json.dumps({**good, **change}).encode()

    base = uri.rsplit("/", 1)[0]
    return {
        "verdict-true": with_(verdict=True),
        "verdict-list": with_(verdict=["pass"]),
        "verdict-upper": with_(verdict="PASS"),
        "extra-key": with_(Verdict="pass", verdict_override="pass"),
        "duplicate-key": json.dumps(good)[:-1].encode() + b', "verdict": "fail"}',
        "nan": json.dumps(good).replace("0.9", "NaN").encode(),
        "huge-confidence": json.dumps(good).replace("0.9", "1e309").encode(),
        "dotdot-citation": with_(citations=[base + "/../summary"]),
        "percent-citation": with_(citations=[uri.replace("/summary", "%2Fsummary")]),
        "assistance-dict": with_(assistance={"verdict": "pass"}),
    }


FORMS = list(_forms("assay://submission/s/summary"))


@pytest.mark.parametrize("form", FORMS)
def test_a_smuggled_response_is_refused_and_the_seat_kept(tmp_path: Path, form: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(1, 1))
        users(platform)
        platform.submit("reviewed", {}, "42", "alice")
        (seat,) = seats_of(platform, "rev1")
        claimed = platform.reviews.claim(seat, "rev1")
        uri = next(m.uri for m in claimed.materials if m.uri.endswith("/summary"))
        with pytest.raises(InvalidInput):
            platform.reviews.respond(seat, "rev1", _forms(uri)[form])
        done = platform.reviews.respond(seat, "rev1", answer("fail", uri))
        assert done.run is not None and done.run.status is Status.REFUTED


def test_a_look_alike_key_in_a_permissive_schema_is_not_a_vote(tmp_path: Path) -> None:
    """The schema allows extra keys: ``Verdict``/``votes`` are recorded, never counted."""
    protocol = single(1, 1)
    protocol["nodes"]["panel"]["response_schema"].pop("additionalProperties")
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, protocol)
        users(platform)
        platform.submit("reviewed", {}, "42", "alice")
        (seat,) = seats_of(platform, "rev1")
        uri = platform.reviews.claim(seat, "rev1").materials[0].uri
        smuggled = answer("fail", uri, Verdict="pass", votes=["pass", "pass"], final="accept")
        done = platform.reviews.respond(seat, "rev1", smuggled)
        assert done.run is not None and done.run.status is Status.REFUTED
