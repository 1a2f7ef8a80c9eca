"""Hack class: a literal spelled so a lax reader takes another value (or a terminator).

Python's ``int`` accepts ``+3``, ``03``, ``1_0``, `` 3``, fullwidth ``３`` and reads ``-0`` and
``00`` as 0, which would end the list early; a float reader takes ``3.0`` as 3. The kind reads a
literal only as ``-?[1-9][0-9]*`` (or the terminating ``0``) and refutes every other spelling,
naming it, instead of guessing what was meant. Huge numbers are out of range, never converted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.helpers import run_kind

FORMULA = "p cnf 3 2\n1 2 0\n-3 0\n"


def judge(tmp_path: Path, assignment: bytes) -> tuple[Status, str]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_bytes(assignment)
    (tmp_path / "f.cnf").write_text(FORMULA)
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="a.txt",
        formula="f.cnf",
    )
    return out.status, out.detail


SPELLINGS = [
    ("v +1 -3 0", "'+1' is not a literal"),
    ("v 01 -3 0", "'01' is not a literal"),
    ("v 1 -03 0", "'-03' is not a literal"),
    ("v 1_0 -3 0", "'1_0' is not a literal"),
    ("v 1.0 -3 0", "'1.0' is not a literal"),
    ("v 1 -3 0.0", "'0.0' is not a literal"),
    ("v 1 -3 -0", "'-0' is not a literal"),
    ("v 1 -3 00", "'00' is not a literal"),
    ("v １ -3 0", "'１' is not a literal"),
    ("v 1 -３ 0", "'-３' is not a literal"),
    ("v ١ -3 0", "'١' is not a literal"),
    ("v 1 −3 0", "'−3' is not a literal"),
    ("v 1 --3 0", "'--3' is not a literal"),
    ("v 1 - 3 0", "'-' is not a literal"),
    ("v 1 3- 0", "'3-' is not a literal"),
    ("v 0x1 -3 0", "'0x1' is not a literal"),
    ("v 1e0 -3 0", "'1e0' is not a literal"),
    ("v true -3 0", "'true' is not a literal"),
    ("v 1,-3,0", "'1,-3,0' is not a literal"),
    ("v 1 -3 0\x00", "is not a literal"),
]


@pytest.mark.parametrize(("assignment", "detail"), SPELLINGS)
def test_other_spellings_are_refuted(tmp_path: Path, assignment: str, detail: str) -> None:
    status, said = judge(tmp_path, assignment.encode())
    assert status is Status.REFUTED, said
    assert detail in said


HUGE = [
    ("v 1 -3 4 0", "line 1: literal 4 is out of range"),
    ("v 1 -3 " + "9" * 5000 + " 0", "is out of range (the formula has 3 variables)"),
    ("v 1 -" + "9" * 5000 + " 0", "is out of range"),
    ("v 1 -3 18446744073709551617 0", "is out of range"),
    ("v 1 -3 -18446744073709551617 0", "is out of range"),
]


@pytest.mark.parametrize(("assignment", "detail"), HUGE, ids=lambda x: str(x)[:20])
def test_huge_numbers_are_out_of_range(tmp_path: Path, assignment: str, detail: str) -> None:
    status, said = judge(tmp_path, assignment.encode())
    assert status is Status.REFUTED, said
    assert detail in said


def test_the_plain_spelling_passes(tmp_path: Path) -> None:
    assert judge(tmp_path, b"v 1 -3 0")[0] is Status.VERIFIED
