"""Tampering with what the platform recorded, as someone holding the store's files could.

Found: ``assay ledger verify`` walked the hash chain only (edits are now caught: verify re-hashes
the blobs; a deleted blob is still an xfail). A blob (a reference's or an artifact's bytes, in
``<root>/<sha[:2]>/<sha>``) that is edited in place or deleted left the chain intact, so verify
exits 0 "intact" while re-checks of every submission that names it now end in ``error``. (Reads do
refuse corrupt bytes: nothing wrong is ever verified from them; the finding is that the one command
meant to say "nothing was tampered with" says so.)

Also a documented limit, not tested here: removing rows from the END of the chain, or rewriting
the chain from an edited row with every hash recomputed, keeps it intact; only comparing
``head`` with a copy kept elsewhere shows it, and ``ledger verify`` takes no head to compare.

Found by padv2 (fixed; kept as regression tests): ``Platform.verify`` stops with an exception (BlobMissing,
IsADirectoryError, LedgerError) instead of reporting the store not intact when a folder
artifact's manifest blob is deleted, or a blob file is replaced by a folder or by a link.

Refused correctly (passing): a run's recorded status edited from refuted to verified with raw SQL
is named by ``ledger verify`` (exit 1, the row).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    make_problem,
    opened,
    store,
)
from tests.ledger.helpers import tamper
from tests.platform.conftest import ASSAY, SCHEMA_CONTRACT, SCHEMA_FILES, artifact


def _verify(db_url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_DB": db_url, "ASSAY_BLOBS": str(tmp_path / "blobs")}
    return subprocess.run(
        [str(ASSAY), "ledger", "verify"], env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "how",
    ["edit", "delete"],
)
def test_ledger_verify_notices_a_tampered_reference_blob(tmp_path: Path, how: str) -> None:
    db_url = f"sqlite:///{tmp_path}/l.db"
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES), "m")
        run = platform.submit("demo", {"doc": artifact(tmp_path, "d.json", '{"x": 1}')}, None, "a")
        assert run.status is Status.VERIFIED
        sha = platform.problem("demo").references[0].sha256
    blob = tmp_path / "blobs" / sha[:2] / sha
    if how == "edit":
        blob.chmod(0o600)
        blob.write_text('{"type": "object"}')
    else:
        blob.unlink()
    done = _verify(db_url, tmp_path)
    assert done.returncode == 1, done.stdout


@pytest.mark.slow
def test_ledger_verify_names_a_run_edited_from_refuted_to_verified(
    db_url: str, tmp_path: Path
) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        run = platform.submit("demo", {}, "41", "alice")
        assert run.status is Status.REFUTED
        seq = platform.ledger.find(kind="run.finished")[0].seq
    tamper(
        db_url,
        f"UPDATE history SET body = REPLACE(body, '\"refuted\"', '\"verified\"') WHERE seq = {seq}",
    )
    done = _verify(db_url, tmp_path)
    assert done.returncode == 1
    assert f"row {seq} was edited" in done.stdout


@pytest.mark.parametrize("how", ["manifest-deleted", "blob-is-a-folder", "blob-is-a-link"])
def test_ledger_verify_reports_a_tampered_tree_instead_of_failing(tmp_path: Path, how: str) -> None:
    """The command meant to say what was tampered with must say it (intact: false, the blob),
    not stop with an exception: a folder artifact's manifest deleted (``_live_blobs`` reads
    every manifest), a blob replaced by a folder (``audit`` opens it), or by a link to a copy of
    its own bytes (``audit`` follows it and passes; ``read`` refuses links)."""
    config = store(f"sqlite:///{tmp_path}/l.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=None), "m")
        folder = tmp_path / "work" / "folder"
        folder.mkdir(parents=True)
        (folder / "a.txt").write_text("hello")
        run = platform.submit("demo", {"doc": folder}, None, "a")
        sha = platform.show(run.submission, "a").artifacts[0].sha256
        blob = tmp_path / "blobs" / sha[:2] / sha
        data = blob.read_bytes()
        blob.unlink()
        if how == "blob-is-a-folder":
            blob.mkdir()
        elif how == "blob-is-a-link":
            copy = tmp_path / "copy"
            copy.write_bytes(data)
            blob.symlink_to(copy)
        try:
            report = platform.verify()
        except Exception as exc:
            pytest.fail(f"verify stopped with {type(exc).__name__}: {exc}")
        assert not report.intact
        assert report.problem is not None and sha in report.problem
