"""Bad input to the platform's commands: one line and exit 2, nothing half-recorded, and a
refusal that really refused.

Found here and fixed by the lead while this was written (now passing): a folder artifact nested
deeper than PATH_MAX: ``assay submit`` ends in "internal error: OSError: [Errno 36] File name too
long" with exit 1 (the size walk and the blob store call ``lstat``/``scandir`` on full paths and
let the OSError through).

Found here and fixed by the lead while this was written (passing): ``assay external record`` by
the named party, under independent entry, concluding ``refuted``: the conclusion and the run's
end were appended, then building the reply for the party raised "submissions are private ...
until the cutoff": exit 2 said refused while the ledger said it happened.

Refused correctly (passing): a FIFO, a symbolic link, a missing path, a folder holding a link, an
unknown submission, ``--result error``, evidence that is a folder: each exit 2 with one line;
a summary with bytes that are not UTF-8 and a folder with names that are not UTF-8 are taken
as they are, without a traceback; a role named ``..``, ``.``, ``a/b`` or ``-rf`` is refused at
publish, and a submitted role outside the contract (``..``, ``../doc``, ``reference``) is refused
at the door and counts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    artifact,
    make_problem,
    opened,
    store,
)
from tests.platform.conftest import ASSAY

OPTIONAL_DOC = {
    **answer_contract(),
    "roles": [{"name": "doc", "required": False, "max_bytes": 100_000}],
}


def _run(tmp_path: Path, *args: str | bytes) -> tuple[int, str, str]:
    import subprocess

    env = {
        **os.environ,
        "ASSAY_DB": f"sqlite:///{tmp_path}/l.db",
        "ASSAY_BLOBS": str(tmp_path / "blobs"),
        "ASSAY_USER": "alice",
    }
    done = subprocess.run([str(ASSAY), *args], env=env, capture_output=True, check=False)
    return done.returncode, os.fsdecode(done.stdout), os.fsdecode(done.stderr)


@pytest.fixture
def published(tmp_path: Path) -> Path:
    folder = make_problem(tmp_path, problem="p", contract=OPTIONAL_DOC)
    code, _, err = _run(tmp_path, "problem", "publish", str(folder), "--as", "mgr")
    assert code == 0, err
    return tmp_path


def _deep(root: Path, depth: int) -> Path:
    """A folder nested ``depth`` times 200 characters deep (built with relative steps)."""
    root.mkdir()
    here = os.getcwd()
    os.chdir(root)
    try:
        for _ in range(depth):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        Path("f").write_text("x")
    finally:
        os.chdir(here)
    return root


@pytest.mark.slow
def test_a_folder_deeper_than_path_max_is_refused_with_exit_2(published: Path) -> None:
    deep = _deep(published / "deep", 25)
    code, out, err = _run(published, "submit", "p", "--summary", "42", "--artifact", f"doc={deep}")
    assert code == 2 and "internal error" not in err, (code, out, err[:300])


def test_a_command_that_says_refused_recorded_nothing(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    contract = answer_contract()
    contract["stages"].append(
        {"name": "judge", "type": "external", "mechanism": "party", "party": "bob"}
    )
    policy = {"independent_entry": {"cutoff": "2031-01-01T00:00:00Z"}}
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=contract, policy=policy), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        before = len(platform.ledger.find())
        try:
            platform.record_external(
                run.submission, "judge", "bob", status=Status.REFUTED, reason="does not hold"
            )
        except InvalidInput:
            assert len(platform.ledger.find()) == before, "refused, yet the refutation is recorded"


# ------------------------------------------------------------------ refused correctly


@pytest.mark.slow
def test_a_fifo_a_link_and_a_missing_path_exit_2(published: Path) -> None:
    fifo = published / "fifo"
    os.mkfifo(fifo)
    link = published / "link"
    link.symlink_to(artifact(published, "target", "42"))
    holder = published / "holder"
    holder.mkdir()
    (holder / "inner").symlink_to("/etc/hostname")
    for path in (fifo, link, holder, published / "missing"):
        code, _, err = _run(
            published, "submit", "p", "--summary", "42", "--artifact", f"doc={path}"
        )
        assert code == 2, (path, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("show", "s-0000000000000000"),
        ("withdraw", "s-0000000000000000", ".."),
        ("external", "record", "s-0", "--stage", "x", "--result", "error", "--reason", "r"),
        ("external", "record", "s-0", "--stage", "x", "--evidence", "/"),
        ("submit", "p", "--summary", "42", "--attempt", "../a"),
        ("submit", "p", "--summary", "42", "--as", "../root"),
    ],
    ids=lambda a: "-".join(a[:2]) if isinstance(a, tuple) else str(a),
)
def test_bad_arguments_exit_2_with_one_line(published: Path, args: tuple[str, ...]) -> None:
    code, _, err = _run(published, *args)
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_names_and_text_that_are_not_utf8_are_taken_as_given(published: Path) -> None:
    folder = published / "odd"
    folder.mkdir()
    (folder / os.fsdecode(b"bad\xffname")).write_text("x")
    (folder / "new\nline").write_text("y")
    code, out, err = _run(
        published, "submit", "p", "--summary", b"4\xff2", "--artifact", f"doc={folder}", "--json"
    )
    assert code == 0 and "Traceback" not in err, err
    assert '"status": "refuted"' in out


@pytest.mark.parametrize("role", ["..", ".", ".hidden", "a/b", "-rf", "x" * 65])
def test_a_role_that_is_not_a_plain_name_is_refused_at_publish(tmp_path: Path, role: str) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    contract = {**answer_contract(), "roles": [{"name": role, "max_bytes": 10}]}
    with opened(config, Clock()) as platform, pytest.raises(InvalidInput, match="roles"):
        platform.publish(make_problem(tmp_path, contract=contract), "mgr")


@pytest.mark.parametrize("role", ["..", "../doc", "doc/..", "reference"])
def test_a_submitted_role_outside_the_contract_is_refused_and_counts(
    tmp_path: Path, role: str
) -> None:
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    policy = {"allowance": {"count": 1, "window_hours": 24}}
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=OPTIONAL_DOC, policy=policy), "mgr")
        with pytest.raises(InvalidInput, match="--artifact"):
            platform.submit("demo", {role: artifact(tmp_path, "x", "42")}, "42", "alice")
        assert [e.kind for e in platform.ledger.find(kind="submission.refused")] == [
            "submission.refused"
        ]
