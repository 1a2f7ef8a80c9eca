"""A site under test: a fresh ledger with two real example problems published (sat-small, with
a sealed reference; reviewed-essay, with the escalation review protocol), users with roles and
tokens, and the real service app over it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient

from assay import Config
from assay.platform import Platform
from assay.service import Settings, create_app
from tests.platform.conftest import make_problem

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "problems"
SAT = EXAMPLES / "sat-small"
ESSAY = EXAMPLES / "reviewed-essay"
USERS: dict[str, tuple[list[str], list[str]]] = {
    "mgr": (["manager"], []),
    "alice": (["participant"], []),
    "bob": (["participant"], []),
    "rev1": (["reviewer"], ["reviewers"]),
    "rev2": (["reviewer"], ["reviewers"]),
    "rev3": (["reviewer"], ["reviewers"]),
    "erin": (["reviewer"], ["experts"]),
    "nobody": ([], ["bystanders"]),
}
PRIVATE_SECRET = "the-sealed-expected-answer-7f3a"
"""The bytes of the 'private' problem's sealed reference: no participant's page or body
ever contains them."""


def private_problem(root: Path) -> Path:
    """Independent entry and held results until 2099, and a check that reads a sealed
    reference: what a participant must not see early."""
    contract = {
        "roles": [{"name": "answer", "required": True, "max_bytes": 1024}],
        "references": [
            {
                "key": "expected",
                "path": "sealed/expected.txt",
                "sealed_until": "2099-01-01T00:00:00Z",
            }
        ],
        "acceptance": "The answer file holds the sealed expected text.",
        "stages": [
            {
                "name": "compare",
                "type": "sandbox",
                "checks": [{"kind": "file_contains", "path": "answer", "pattern": "42"}],
            }
        ],
    }
    policy = {
        "independent_entry": {"cutoff": "2099-01-01T00:00:00Z"},
        "release": {"results": "held", "score_release": "2099-01-01T00:00:00Z"},
    }
    return make_problem(
        root,
        problem="private",
        contract=contract,
        policy=policy,
        files={"sealed/expected.txt": PRIVATE_SECRET},
    )


@dataclass
class Site:
    config: Config
    app: FastAPI
    tokens: dict[str, str]

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


def make_site(tmp_path: Path) -> Site:
    config = Config(db=f"sqlite:///{tmp_path / 'assay.db'}")
    tokens: dict[str, str] = {}
    with Platform.open(config) as platform:
        platform.publish(SAT, "mgr")
        platform.publish(ESSAY, "mgr")
        platform.publish(private_problem(tmp_path / "folders"), "mgr")
        for name, (roles, groups) in USERS.items():
            view = platform.reviews.add_user(name, groups, "admin", roles)
            assert view.token is not None
            tokens[name] = view.token
    app = create_app(Settings(config=config))
    return Site(config=config, app=app, tokens=tokens)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    found = make_site(tmp_path)
    yield found
    found.app.state.web.close()


@pytest.fixture
def api(site: Site) -> Iterator[TestClient]:
    with TestClient(site.app, raise_server_exceptions=False) as client:
        yield client
