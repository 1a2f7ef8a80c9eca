"""The people's API (``/v1``, bearer tokens) as each kind of user, in-process over httpx: who
may read and do what follows the platform's rules, and a refusal leaks nothing in its body."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

from assay.platform import Platform
from tests.web.conftest import ESSAY, EXAMPLES, PRIVATE_SECRET, SAT, Site

SEALED = (SAT / "sealed" / "held-out.cnf").read_bytes()
GOOD = (SAT / "submissions" / "good" / "assignment.txt").read_bytes()
HELD_OUT_BAD = (SAT / "submissions" / "bad-held-out" / "assignment.txt").read_bytes()


def submit(
    api: TestClient,
    site: Site,
    user: str,
    problem: str,
    files: dict[str, bytes],
    summary: str | None = None,
) -> dict:
    data = {"summary": summary} if summary is not None else None
    answer = api.post(
        f"/v1/problems/{problem}/submissions",
        headers=site.auth(user),
        files={role: (role, content) for role, content in files.items()},
        data=data,
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_a_request_without_a_valid_token_is_refused(api: TestClient, site: Site) -> None:
    assert api.get("/v1/problems").status_code == 401
    for header in ("Bearer nope", "Basic " + site.tokens["alice"], site.tokens["alice"], "Bearer "):
        answer = api.get("/v1/problems", headers={"Authorization": header})
        assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer"
    me = api.get("/v1/me", headers=site.auth("rev1")).json()
    assert me == {"user": "rev1", "roles": ["reviewer"], "groups": ["reviewers"]}


def test_a_new_token_replaces_the_old_one(api: TestClient, site: Site) -> None:
    with Platform.open(site.config) as platform:
        fresh = platform.reviews.add_user("alice", [], "admin", ["participant"]).token
    assert api.get("/v1/me", headers=site.auth("alice")).status_code == 401
    answer = api.get("/v1/me", headers={"Authorization": f"Bearer {fresh}"})
    assert answer.status_code == 200 and answer.json()["user"] == "alice"


def test_tokens_are_stored_only_as_hashes(site: Site) -> None:
    with Platform.open(site.config) as platform:
        stored = json.dumps([e.body for e in platform.ledger.find()])
    for token in site.tokens.values():
        assert token not in stored


def test_a_sealed_reference_is_served_only_to_the_problem_s_managers(
    api: TestClient, site: Site
) -> None:
    for user in ("alice", "rev1", "nobody"):
        answer = api.get("/v1/problems/sat-small/references/held-out", headers=site.auth(user))
        assert answer.status_code == 403
        assert SEALED[:40] not in answer.content and b"sealed until 2030" in answer.content
    answer = api.get("/v1/problems/sat-small/references/held-out", headers=site.auth("mgr"))
    assert answer.status_code == 200 and answer.content == SEALED
    assert answer.headers["content-disposition"] == "attachment"
    public = api.get("/v1/problems/sat-small/references/formula", headers=site.auth("alice"))
    assert (
        public.status_code == 200 and public.content.startswith(b"c ")
    ) or b"p cnf" in public.content
    missing = api.get("/v1/problems/sat-small/references/nope", headers=site.auth("mgr"))
    assert missing.status_code == 404
    shown = api.get("/v1/problems/sat-small", headers=site.auth("alice"))
    held = next(r for r in shown.json()["references"] if r["key"] == "held-out")
    assert held["sealed_until"] == "2030-01-01T00:00:00Z" and len(held["sha256"]) == 64
    assert SEALED[:40].decode() not in shown.text


def test_a_participant_submits_as_themselves_and_sees_the_verdict(
    api: TestClient, site: Site
) -> None:
    run = submit(api, site, "alice", "sat-small", {"assignment": GOOD})
    assert run["status"] == "verified" and run["label"] == "Verified"
    shown = api.get(f"/v1/submissions/{run['submission']}", headers=site.auth("alice")).json()
    assert shown["participant"] == "alice" and shown["verdict"]["standing"] == "verified"
    allowance = api.get("/v1/problems/sat-small/allowance", headers=site.auth("alice")).json()
    assert allowance == {"count": 5, "window_hours": 24.0, "left": 4, "next_slot": None}


def test_only_participants_submit(api: TestClient, site: Site) -> None:
    for user in ("rev1", "nobody"):
        answer = api.post(
            "/v1/problems/sat-small/submissions",
            headers=site.auth(user),
            files={"assignment": ("a", GOOD)},
        )
        assert answer.status_code == 403 and "participant" in answer.json()["detail"]
    with Platform.open(site.config) as platform:
        assert not platform.ledger.find(kind="submission.made")


def test_a_bad_upload_is_refused_naming_the_field(api: TestClient, site: Site) -> None:
    answer = api.post(
        "/v1/problems/sat-small/submissions",
        headers=site.auth("alice"),
        files={"nope": ("a", GOOD)},
    )
    assert answer.status_code == 422 and "nope" in answer.json()["detail"]
    answer = api.post(
        "/v1/problems/sat-small/submissions",
        headers=site.auth("alice"),
        data={"assignment": "text, not a file"},
    )
    assert answer.status_code == 422 and "assignment" in answer.json()["detail"]


def test_a_sealed_check_s_detail_is_withheld_from_the_participant(
    api: TestClient, site: Site
) -> None:
    run = submit(api, site, "alice", "sat-small", {"assignment": HELD_OUT_BAD})
    assert run["status"] == "refuted"
    mine = api.get(f"/v1/submissions/{run['submission']}", headers=site.auth("alice")).json()
    theirs = api.get(f"/v1/submissions/{run['submission']}", headers=site.auth("mgr")).json()
    held_mine = mine["runs"][-1]["stages"][1]
    held_theirs = theirs["runs"][-1]["stages"][1]
    assert held_mine["detail"] != held_theirs["detail"]
    assert held_theirs["detail"] not in json.dumps(mine)


def test_independent_entry_and_held_results(api: TestClient, site: Site) -> None:
    run = submit(api, site, "alice", "private", {"answer": b"42\n"}, summary="alice's own words")
    sid = run["submission"]
    assert run["status"] is None and run["label"].startswith("Recorded")
    for user in ("bob", "rev1", "nobody"):
        answer = api.get(f"/v1/submissions/{sid}", headers=site.auth(user))
        assert answer.status_code == 404
        assert "alice" not in answer.text and "42" not in answer.text
    unknown = api.get("/v1/submissions/s-0000000000000000", headers=site.auth("bob"))
    assert unknown.status_code == 404 and unknown.json() == answer.json()
    mine = api.get(f"/v1/submissions/{sid}", headers=site.auth("alice")).json()
    assert mine["verdict"]["standing"] is None and "verified" not in json.dumps(mine["runs"])
    manager = api.get(f"/v1/submissions/{sid}", headers=site.auth("mgr")).json()
    assert manager["verdict"]["standing"] == "verified"
    for user in ("alice", "bob"):
        body = api.get("/v1/problems/private/references/expected", headers=site.auth(user))
        assert body.status_code == 403 and PRIVATE_SECRET not in body.text


def test_recheck_and_revoke_are_for_managers(api: TestClient, site: Site) -> None:
    run = submit(api, site, "alice", "sat-small", {"assignment": GOOD})
    sid = run["submission"]
    assert api.post(f"/v1/submissions/{sid}/recheck", headers=site.auth("alice")).status_code == 403
    again = api.post(f"/v1/submissions/{sid}/recheck", headers=site.auth("mgr"))
    assert again.status_code == 200 and again.json()["recheck"] is True
    checker = run["stages"][0]["checkers"][0]
    body = {"checker": checker, "why": "a bug in the checker"}
    assert api.post("/v1/revocations", headers=site.auth("alice"), json=body).status_code == 403
    done = api.post("/v1/revocations", headers=site.auth("mgr"), json=body)
    assert done.status_code == 200 and run["run"] in done.json()["runs"]
    shown = api.get(f"/v1/submissions/{sid}", headers=site.auth("alice")).json()
    assert all(r["revoked"] and "a bug in the checker" in r["revoked"] for r in shown["runs"])
    with Platform.open(site.config) as platform:
        revoked = platform.ledger.find(kind="checker.revoked")
    assert revoked[-1].body["by"] == "mgr"


def test_review_seats_follow_the_protocol_and_the_token(api: TestClient, site: Site) -> None:
    essay = (ESSAY / "submissions" / "good" / "essay.md").read_bytes()
    thesis = (ESSAY / "submissions" / "good" / "summary.txt").read_text().strip()
    run = submit(api, site, "alice", "reviewed-essay", {"essay": essay}, summary=thesis)
    assert run["status"] is None and run["label"].startswith("Pending")
    assert api.get("/v1/seats", headers=site.auth("alice")).status_code == 403
    seats = api.get("/v1/seats", headers=site.auth("rev1")).json()
    assert (
        len(seats["open"]) == 3
        and not api.get("/v1/seats", headers=site.auth("erin")).json()["open"]
    )
    seat = seats["open"][0]["seat"]
    assert api.post(f"/v1/seats/{seat}/claim", headers=site.auth("erin")).status_code == 403
    claimed = api.post(f"/v1/seats/{seat}/claim", headers=site.auth("rev1"))
    assert claimed.status_code == 200 and claimed.json()["user"] == "rev1"
    uri = claimed.json()["materials"][0]["uri"]
    other = api.get(f"/v1/seats/{seat}/material", params={"uri": uri}, headers=site.auth("rev2"))
    assert other.status_code == 404 and essay[:30] not in other.content
    mine = api.get(f"/v1/seats/{seat}/material", params={"uri": uri}, headers=site.auth("rev1"))
    assert mine.status_code == 200 and mine.content == essay
    bad = {
        "verdict": "pass",
        "rationale": "",
        "citations": [uri],
        "confidence": 1,
        "assistance": [],
    }
    refused = api.post(f"/v1/seats/{seat}/respond", headers=site.auth("rev1"), json=bad)
    assert refused.status_code == 422 and "rationale" in refused.json()["detail"]
    good = {**bad, "rationale": "Correct and clear."}
    assert (
        api.post(f"/v1/seats/{seat}/respond", headers=site.auth("rev2"), json=good).status_code
        == 422
    )
    answered = api.post(f"/v1/seats/{seat}/respond", headers=site.auth("rev1"), json=good)
    assert answered.status_code == 200 and answered.json()["user"] == "rev1"
    record = api.get(f"/v1/submissions/{run['submission']}/review", headers=site.auth("mgr"))
    assert record.status_code == 200
    for user in ("alice", "rev1"):
        refused = api.get(f"/v1/submissions/{run['submission']}/review", headers=site.auth(user))
        assert refused.status_code == 403


def test_the_process_is_shown_before_anyone_starts(api: TestClient, site: Site) -> None:
    problems = api.get("/v1/problems", headers=site.auth("nobody")).json()["problems"]
    assert [p["problem"] for p in problems] == ["private", "reviewed-essay", "sat-small"]
    shown = api.get("/v1/problems/reviewed-essay", headers=site.auth("nobody")).json()
    assert [s["name"] for s in shown["stages"]] == ["form", "review"]
    statement = api.get("/v1/problems/reviewed-essay/statement", headers=site.auth("nobody"))
    assert statement.status_code == 200 and statement.text.strip()
    assert api.get("/v1/problems/nope", headers=site.auth("nobody")).status_code == 404


def test_an_external_party_records_its_word_and_no_one_else_can(
    api: TestClient, site: Site
) -> None:
    folder = EXAMPLES / "external-party"
    with Platform.open(site.config) as platform:
        platform.publish(folder, "mgr")
        lab = platform.reviews.add_user("replication-lab", ["labs"], "admin").token
    protocol = (folder / "submissions" / "good" / "protocol.md").read_bytes()
    run = submit(api, site, "alice", "external-party", {"protocol": protocol})
    assert run["label"].startswith("Pending")
    word = {"stage": "replication", "result": "verified", "reason": "reproduced within 2%"}
    for user in ("alice", "mgr"):
        refused = api.post(
            f"/v1/submissions/{run['submission']}/external", headers=site.auth(user), json=word
        )
        assert refused.status_code == 422 and "replication-lab" in refused.json()["detail"]
    done = api.post(
        f"/v1/submissions/{run['submission']}/external",
        headers={"Authorization": f"Bearer {lab}"},
        json=word,
    )
    assert done.status_code == 200 and done.json()["status"] == "verified"
    assert done.json()["stages"][-1]["recorded_by"] == "replication-lab"
    private = submit(api, site, "alice", "private", {"answer": b"42"})
    hidden = api.post(
        f"/v1/submissions/{private['submission']}/external",
        headers={"Authorization": f"Bearer {lab}"},
        json=word,
    )
    assert hidden.status_code == 404 and "private" not in hidden.text
