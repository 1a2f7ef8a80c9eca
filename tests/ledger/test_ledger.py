"""The ledger's store: entries append in one chain, read back exactly, and survive reopening,
on SQLite and on PostgreSQL (``db_url`` runs each test on both)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay import Config, InvalidInput
from assay._signed import canonical_digest
from assay.ledger import Ledger, LedgerError
from assay.ledger._chain import GENESIS
from assay.ledger._migrate import HEAD, SCRIPTS
from tests.ledger.helpers import T0, entry, fill, open_ledger, raw_sql


def test_appends_chain_and_read_back_exactly(db_url: str, tmp_path: Path) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        first = ledger.append(entry(1))
        rest = ledger.append(entry(2), entry(3), entry(4))
        stored = ledger.find()
    appended = first + rest
    assert [e.seq for e in appended] == [1, 2, 3, 4]
    assert appended[0].prev_hash == GENESIS
    assert [e.prev_hash for e in appended[1:]] == [e.hash for e in appended[:-1]]
    assert stored == appended
    assert stored[1].body == entry(2).body
    assert stored[1].at == T0 + timedelta(seconds=2)
    for row in stored:  # the hash is the design's: sha256 of the row's canonical JSON
        at = row.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        fields = [row.seq, row.kind, row.subject, row.problem, row.participant, at]
        assert row.hash == canonical_digest([*fields, row.body, row.prev_hash])


def test_find_filters_and_keeps_chain_order(db_url: str, tmp_path: Path) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        fill(ledger, 9)
        assert [e.seq for e in ledger.find(kind="run.started")] == [1, 3, 5, 7, 9]
        assert [e.seq for e in ledger.find(kind=("run.started", "run.finished"))] == list(
            range(1, 10)
        )
        assert [e.seq for e in ledger.find(problem="problem-0")] == [3, 6, 9]
        assert [e.seq for e in ledger.find(participant="user-0", problem="problem-1")] == [4]
        assert [e.seq for e in ledger.find(subject="run-5")] == [5]
        assert [e.seq for e in ledger.find(since=T0 + timedelta(seconds=7))] == [7, 8, 9]
        assert ledger.find(kind="nothing") == []


def test_times_are_stored_in_utc_and_default_to_now(db_url: str, tmp_path: Path) -> None:
    plus_two = timezone(timedelta(hours=2))
    with open_ledger(db_url, tmp_path) as ledger:
        before = datetime.now(UTC)
        (now,) = ledger.append(entry(1, at=None))
        (given,) = ledger.append(entry(2, at=datetime(2026, 5, 1, 12, 0, 0, 123456, plus_two)))
        (read,) = ledger.find(subject="run-2")
    assert before <= now.at <= datetime.now(UTC)
    assert given.at == read.at == datetime(2026, 5, 1, 10, 0, 0, 123456, UTC)
    assert read.at.tzinfo == UTC


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"at": datetime(2026, 1, 1)}, "at"),  # naive: its zone would be a guess
        ({"kind": ""}, "kind"),
        ({"subject": ""}, "subject"),
        ({"body": ["not", "an", "object"]}, "body"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_field(
    fields: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        entry(1, **fields)
    assert caught.value.errors()[0]["loc"][0] == field


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, object()])
def test_a_body_that_is_not_strict_json_stores_nothing(
    db_url: str, tmp_path: Path, value: object
) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        with pytest.raises(InvalidInput, match=r"^body: "):
            ledger.append(entry(1), entry(2, body={"x": value}))
        assert ledger.find() == []
        assert ledger.verify().rows == 0


def test_an_append_is_all_or_nothing(db_url: str, tmp_path: Path) -> None:
    """The database refuses the third row of an append (a trigger planted for the test): the
    rows before it in the same append are not stored either, and the chain goes on."""
    with open_ledger(db_url, tmp_path) as ledger:
        ledger.append(entry(1))
        if ledger.dialect == "sqlite":
            plant = [
                "CREATE TRIGGER poison BEFORE INSERT ON history WHEN NEW.subject = 'poison' "
                "BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
            ]
        else:
            plant = [
                "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF NEW.subject = 'poison' THEN RAISE EXCEPTION 'poisoned row'; END IF; "
                "RETURN NEW; END $$",
                "CREATE TRIGGER poison BEFORE INSERT ON history "
                "FOR EACH ROW EXECUTE FUNCTION poison()",
            ]
        raw_sql(db_url, *plant)
        with pytest.raises(LedgerError, match=r"append .* failed: .*poisoned row"):
            ledger.append(entry(2), entry(3), entry(4, subject="poison"), entry(5))
        assert [e.seq for e in ledger.find()] == [1]
        (next_entry,) = ledger.append(entry(6))
        assert next_entry.seq == 2
        assert ledger.verify().intact


@pytest.mark.parametrize("field", ["kind", "subject", "problem", "participant"])
@pytest.mark.parametrize("text", ["nul\x00inside", "lone \ud800 surrogate"])
def test_text_a_database_cannot_store_is_refused_up_front(field: str, text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        entry(1, **{field: text})
    assert caught.value.errors()[0]["loc"][0] == field


def test_the_chain_continues_after_reopening(db_url: str, tmp_path: Path) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        fill(ledger, 3)
    with open_ledger(db_url, tmp_path) as ledger:
        (fourth,) = ledger.append(entry(4))
        report = ledger.verify()
    assert fourth.seq == 4
    assert report.intact and report.rows == 4 and report.head == fourth.hash


def test_the_head_revision_is_alembics_head() -> None:
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory

    config = AlembicConfig()
    config.set_main_option("script_location", str(SCRIPTS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD


def test_url_and_errors_never_show_the_password(tmp_path: Path) -> None:
    config = Config(db="postgresql+psycopg://assay:s3cret@127.0.0.1:1/none", blobs=str(tmp_path))
    with pytest.raises(LedgerError) as caught:
        Ledger.open(config)
    assert "s3cret" not in str(caught.value)
    assert "***" in str(caught.value)


def test_a_store_that_cannot_be_opened_is_a_ledger_error(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="cannot be opened"):
        Ledger.open(Config(db=f"sqlite:///{tmp_path}/missing/folder/x.db"))


@pytest.mark.parametrize(
    "url",
    ["mysql://u@h/db", "postgresql://u@h/db", "sqlite://", "sqlite:///:memory:", "assay.db", ""],
)
def test_assay_db_names_only_the_two_stores(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("ASSAY_DB", url)
    with pytest.raises(InvalidInput, match=r"^ASSAY_DB: "):
        Config.from_env()


def test_blobs_default_beside_sqlite_or_in_the_cache(tmp_path: Path) -> None:
    assert Config(db=f"sqlite:///{tmp_path}/s.db").blob_folder() == tmp_path / "s.db.blobs"
    pg = Config(db="postgresql+psycopg://u@h/d", cache_home=str(tmp_path / "cache"))
    assert pg.blob_folder() == tmp_path / "cache" / "blobs"
    assert Config(blobs=str(tmp_path / "b")).blob_folder() == tmp_path / "b"


def test_chain_report_is_a_wire_document(db_url: str, tmp_path: Path) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        fill(ledger, 2)
        document = ledger.verify().to_json()
    assert document["schema"] == "assay.ledger_verify/1"
    assert json.loads(json.dumps(document))["rows"] == 2


def test_a_new_sqlite_store_is_private(tmp_path: Path) -> None:
    with open_ledger(f"sqlite:///{tmp_path}/new.db", tmp_path) as ledger:
        ledger.append(entry(1))
        modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.glob("new.db*")}
    assert modes["new.db"] == 0o600
    assert all(mode == 0o600 for mode in modes.values()), modes


def test_find_since_a_naive_time_is_refused(db_url: str, tmp_path: Path) -> None:
    with open_ledger(db_url, tmp_path) as ledger, pytest.raises(InvalidInput, match=r"^since: "):
        ledger.find(since=datetime(2026, 1, 1))
