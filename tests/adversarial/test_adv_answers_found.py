"""Attacks on the answer kinds that still work (adversarial review "adv-answers", 09:20 UTC).

Each test states the status assay gives now that the attack is closed (helper "answers-fix"
removed the ``xfail(strict=True)`` markers as each class was fixed); /work/notes/adv-answers.md
has the reproductions and /work/notes/answers-fix.md the fixes.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Outcome, Status
from tests.helpers import run_kind

REPO = Path(__file__).resolve().parents[2]


def _number(answer: str, **spec: Any) -> Outcome:
    return run_kind("answer_number", answer=answer, **spec)


# -- answer_number ---------------------------------------------------------------------------

# (answer, value): the answer shows (or hedges) a different value, assay reads exactly `value`.
SIGN_DROPPED = [
    ("-\u034f42", 42),  # combining grapheme joiner (Mn, invisible) between "-" and the digits
    ("-\ufe0f42", 42),  # variation selector 16
    ("\u2212\U000e010042", 42),  # variation selector supplement after U+2212
    ("-\u033242", 42),  # combining low line under the minus
    ("\u205242", 42),  # U+2052 COMMERCIAL MINUS SIGN (a real minus sign in commerce)
    ("\u02d742", 42),  # U+02D7 MODIFIER LETTER MINUS SIGN
    ("\u223842", 42),  # U+2238 DOT MINUS
    ("minus 42", 42),
    ("negative 42", 42),
    ("plus or minus 42", 42),
    ("- -42", -42),  # a doubled sign written apart ("+-42" and "--42" are refused)
    ("- +42", 42),
    # a sign set apart from the digits by markup or brackets (each renders or means -42)
    ("-(42)", 42),
    ("-{42}", 42),
    ("$-$42", 42),
    ("-\\,42", 42),  # LaTeX thin space
    ("-**42**", 42),  # markdown bold
    ("-`42`", 42),
    ("&minus;42", 42),
    ("-&nbsp;42", 42),
]


@pytest.mark.parametrize(("answer", "value"), SIGN_DROPPED)
def test_a_dropped_sign_is_not_read_as_the_unsigned_value(answer: str, value: int) -> None:
    outcome = _number(answer, value=value)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


OPERATORS = [
    ("\u221a42", 42),  # square root of 42
    ("\u221b42", 42),  # cube root
    ("e^42", 42),
    ("exp(42)", 42),
    ("42\u03c0", 42),  # 42 pi
    ("42 pi", 42),
    ("0xFF", 0),  # hex 255 read as its leading 0
    ("0xDEAD", 0),
    ("\\sqrt{42}", 42),  # LaTeX
    ("42\\pi", 42),
    ("\\ln 42", 42),
    ("42\u00b1", 42),  # a trailing plus-minus (a trailing "+" is refused)
    ("42 +/-", 42),
    ("42\u20e0", 42),  # combining "prohibited" circle-backslash over the number
    ("42\u0338", 42),  # combining long solidus overlay ("not")
]


@pytest.mark.parametrize(("answer", "value"), OPERATORS)
def test_an_operator_applied_to_the_number_is_not_ignored(answer: str, value: int) -> None:
    outcome = _number(answer, value=value)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


NUMBER_WORDS = [
    "42 hundredths",  # 0.42
    "42 thousandths",
    "42 tenths",
    "42 thirds",
    "42 gross",  # 42 x 144
    "42 score",  # 42 x 20
    "42MM",  # finance: 42 million
    "42 mil",
    "42 bil",
    "42 grand",
    "42 lac",  # lakh
    "42 myriad",
    "42 Tsd.",
    "\u00a342m",  # £42m: 42 million pounds (UK press style)
    "$42m",
    "$42mm",
    "42 or fortythree",  # a spelled number without its hyphen
    "42 or FortyThree",
    "42 or XLIII",  # roman numerals
    "XLIII or 42",
    "42 or infinite",  # "infinity" is caught, its adjective is not
    "42 NaNs",
    "42 or f\u043erty-f\u043eur",  # Cyrillic o: a confusable spelling of forty-four
]


@pytest.mark.parametrize("answer", NUMBER_WORDS)
def test_number_words_beside_a_number_are_not_ignored(answer: str) -> None:
    outcome = _number(answer, value=42)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


UNIT_HEDGES = [
    ("42 m or km", 42, "m"),
    ("42 m (or km)", 42, "m"),
    ("42 m, or km", 42, "m"),
    ("42 m. Or km.", 42, "m"),
    ("42 meter or kilometer", 42, "m"),
    ("42 m or cm or km", 42, "m"),
    ("42 m or km", 0.042, "km"),
    ("20 \u00b0C or \u00b0F", 20, "degC"),
    ("68 degF or degC", 20, "degC"),
]


@pytest.mark.parametrize(("answer", "value", "unit"), UNIT_HEDGES)
def test_a_hedge_between_units_is_ambiguous(answer: str, value: float, unit: str) -> None:
    outcome = _number(answer, value=value, unit=unit)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


@pytest.mark.parametrize(
    ("answer", "value"),
    [("1000000001 km", 10**12), ("1000000.001 km", 10**9), ("1000000000.5 mm", 10**6)],
)
def test_a_unit_conversion_does_not_loosen_an_exact_key(answer: str, value: int) -> None:
    outcome = _number(answer, value=value, unit="m")
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


@pytest.mark.parametrize("answer", ["1e308 km", "1.7e308 km", "1e300 lightyear", "1e300 Ym"])
def test_a_conversion_past_the_float_range_is_refuted_not_an_error(answer: str) -> None:
    outcome = _number(answer, value=1, unit="m")
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


_CHECK_IN_CHILD = """
import sys
sys.path.insert(0, {repo!r})
from tests.helpers import run_kind
print(run_kind("answer_number", answer={answer!r}, value=0).status.value)
"""


@pytest.mark.slow
@pytest.mark.parametrize("answer", ["0e99999999", "0.0e-99999999"])
def test_a_zero_with_a_huge_exponent_is_read_at_once(answer: str) -> None:
    code = _CHECK_IN_CHILD.format(repo=str(REPO), answer=answer)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=15
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{answer!r} was still being read after 15 s")
    # 0 exactly: verified, or refused as malformed if the fix bounds exponents; never a hang
    assert done.stdout.strip() in ("verified", "refuted"), done.stderr


# -- sql_query ---------------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "v.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (n INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    return path


@pytest.mark.parametrize("answer", ["minus 42", "-\u034f42", "42 hundredths", "\u221a42"])
def test_answer_value_inherits_the_number_gaps(db: Path, answer: str) -> None:
    outcome = run_kind(
        "sql_query",
        answer=answer,
        base_dir=db.parent,
        database=db.name,
        query="SELECT 42",
        compare="answer_value",
    )
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)


@pytest.mark.slow
def test_the_answer_query_time_limit_binds(db: Path) -> None:
    columns = ", ".join(["length(printf('%.*c', 100000000, 'x'))"] * 24)
    started = time.monotonic()
    outcome = run_kind(
        "sql_query",
        answer=f"SELECT {columns}",
        base_dir=db.parent,
        database=db.name,
        query="SELECT count(*) FROM t",
        compare="answer_query",
        limits_are_rules=True,
        config=Config(sql_timeout=0.25),
    )
    elapsed = time.monotonic() - started
    assert outcome.status is Status.REFUTED, outcome.detail
    assert elapsed < 2.5, f"the answer query ran {elapsed:.1f}s against a 0.25s limit"


_SQL_IN_CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.helpers import run_kind
outcome = run_kind("sql_query", answer={answer!r}, base_dir=Path({base!r}), database={name!r},
                   query="SELECT count(*) FROM t", compare="answer_query")
print(outcome.status.value)
print(outcome.detail[:200])
"""


def _cap_memory() -> None:
    limit = 1536 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
def test_huge_answer_values_are_refuted_not_an_error(db: Path) -> None:
    answer = "SELECT printf('%.*c', 400000000, 'x') FROM t"
    code = _SQL_IN_CHILD.format(repo=str(REPO), answer=answer, base=str(db.parent), name=db.name)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_cap_memory,
    )
    assert done.stdout.split("\n")[0] == "refuted", done.stdout + done.stderr


# -- web_receipt -------------------------------------------------------------------------------

SERVED = [{"url": "https://example.org/a", "status": 200}]

UNSEEN_CITATIONS = [
    # a URL cut short at a character browsers keep (the WHATWG parser reads "\" as "/")
    "https://example.org/a\\..\\secret",
    "https://example.org/a'b",
    "https://example.org/a^b",
    "https://example.org/a|b",
    "https://example.org/a{b}",
    "https://example.org/a`b",
    "example.org/a\\b",
    # one slash: browsers go to evil.example
    "http:/evil.example/x",
    "HTTPS:/evil.example",
    # default-ignorable marks IDNA drops (browsers resolve evil.example), not Cf so not removed
    "evil\u034f.example/x",
    "evil\ufe0f.example/x",
    "www\u034f.evil.com",
    "https:/\u034f/evil.example/x",
    # IDNA full stops (UTS 46 maps them to ".")
    "evil\u3002com/x",
    "EVIL\u3002COM/x",
    "evil\uff61com/x",
    # a host right after "...", "…" or a bullet dash
    "Sources\u2026evil.com/x",
    "see...evil.com/x",
    "\n-evil.com/x",
    # HTML entities a markdown renderer decodes
    "evil&#46;com/x",
    "[report](//evil&#46;com/x)",
    # a source made up inline
    "[report](data:text/html,<b>the answer is 42</b>)",
    # a host with a port but no dot
    "localhost:8080/x",
    # defanged (documented limit, but it names a host)
    "evil[.]com/x",
    "evil(.)com/x",
]


@pytest.mark.parametrize("form", UNSEEN_CITATIONS)
def test_an_unserved_citation_in_a_missed_form_refutes(form: str) -> None:
    answer = f"Per https://example.org/a and {form}"
    outcome = run_kind("web_receipt", answer=answer, receipts=SERVED)
    assert outcome.status is Status.REFUTED, (form, outcome.detail)


@pytest.mark.parametrize("form", ["example.org@evil.com/x", "example.org:@evil.com/x"])
def test_userinfo_without_a_scheme_names_the_host_after_the_at(form: str) -> None:
    outcome = run_kind(
        "web_receipt",
        answer=f"Per {form}",
        receipts=[{"url": "https://example.org/", "status": 200}],
    )
    assert outcome.status is Status.REFUTED, (form, outcome.detail)


# -- report output -----------------------------------------------------------------------------


def test_human_output_keeps_the_status_in_an_ascii_locale(tmp_path: Path) -> None:
    task = tmp_path / "task.json"
    task.write_text(
        '{"checks": [{"kind": "answer_one_of", "values": ["Paris"]}], "answer": "\\u041f\\u0430"}'
    )
    env = {
        **os.environ,
        "LC_ALL": "POSIX",
        "LANG": "POSIX",
        "PYTHONUTF8": "0",
        "PYTHONCOERCECLOCALE": "0",
    }
    env.pop("PYTHONIOENCODING", None)
    done = subprocess.run(
        [sys.executable, "-m", "assay", "check", "--human", str(task)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert "assay failed on this task" not in output, output
    assert Status.REFUTED.label in done.stdout, output


# -- honest forms the fixes above must keep (controls: each must stay verified) ----------------

HONEST_NUMBERS = [
    ("**42**", 42),
    ("The answer is **42**.", 42),
    ("`42`", 42),
    ("$42$", 42),
    ("\\boxed{42}", 42),
    ("x = \\boxed{-42}", -42),
    ("$\\approx 42$", 42),
    ("x \u2192 42", 42),
    ("x -> 42", 42),
    ("| 42 |", 42),
    ("(42)", 42),
    ("**Answer:** 42", 42),
    ("It is 42!", 42),
    ("The score is 42", 42),
    ("42 points", 42),
    ("x = -42", -42),
    ("\u221242", -42),
    ("&minus;42", -42),
    ("0e5", 0),
    ("0.000", 0),
    ("I think it is 42", 42),
    ("Part X: 42", 42),
    ("a total of 42", 42),
    ("out of 42", 42),
]


@pytest.mark.parametrize(("answer", "value"), HONEST_NUMBERS)
def test_honest_number_forms_stay_verified(answer: str, value: int) -> None:
    outcome = _number(answer, value=value)
    assert outcome.status is Status.VERIFIED, (answer, outcome.detail)


HONEST_UNITS = [
    ("It is 42 km.", 42000, "m"),
    ("42 m, i.e. meters", 42, "m"),
    ("1 foot", 0.3048, "m"),
    ("12 inch", 0.3048, "m"),
    ("36 km/h", 10, "m/s"),
    ("1 mile", 1.609344, "km"),
    ("100 degC", 212, "degF"),
    ("1000000001 km", 1000000001000, "m"),  # exact factor: exact comparison, both ways
    ("5 h", 300, "min"),
    ("42 m in total", 42, "m"),  # "in" is prose here, not a second unit (inch)
    ("42 in", 1.0668, "m"),
]


@pytest.mark.parametrize(("answer", "value", "unit"), HONEST_UNITS)
def test_honest_unit_forms_stay_verified(answer: str, value: float, unit: str) -> None:
    outcome = _number(answer, value=value, unit=unit)
    assert outcome.status is Status.VERIFIED, (answer, outcome.detail)


@pytest.mark.parametrize(
    "answer",
    ["SELECT fts3_tokenizer('simple', x'4141414141414141')", "SELECT fts3_tokenizer('simple')"],
)
def test_fts3_tokenizer_is_not_authorized(db: Path, answer: str) -> None:
    outcome = run_kind(
        "sql_query",
        answer=answer,
        base_dir=db.parent,
        database=db.name,
        query="SELECT count(*) FROM t",
        compare="answer_query",
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "may only read" in outcome.detail


def test_printf_with_sane_widths_still_works_in_an_answer_query(db: Path) -> None:
    outcome = run_kind(
        "sql_query",
        answer="SELECT printf('%05.1f|%s', n / 2.0, 'x'), format('%d', n) FROM t",
        base_dir=db.parent,
        database=db.name,
        query="SELECT printf('%05.1f|%s', n / 2.0, 'x'), printf('%d', n) FROM t",
        compare="answer_query",
    )
    assert outcome.status is Status.VERIFIED, outcome.detail


HONEST_CITATIONS = [
    "See [a](https://example.org/a).",
    "`https://example.org/a`",
    "'https://example.org/a'",
    "**https://example.org/a**",
    "Source: <https://example.org/a>",
    "(https://example.org/a)",
    "Mail bob@mail.example.com; source https://example.org/a",
    "Node.js docs: https://example.org/a... done",
    "the data: https://example.org/a",
]


@pytest.mark.parametrize("answer", HONEST_CITATIONS)
def test_honest_citation_forms_stay_verified(answer: str) -> None:
    outcome = run_kind("web_receipt", answer=answer, receipts=SERVED)
    assert outcome.status is Status.VERIFIED, (answer, outcome.detail)


@pytest.mark.parametrize(
    "answer",
    [
        "SELECT printf(x'252e2a63', 100000000, 'x')",  # '%.*c' given as a blob
        "SELECT format('%.*c', 100000000, 'x')",
        "SELECT printf('%.99999999c', 'x')",
        "SELECT zeroblob(100000000)",
        "SELECT count(*) FROM t WHERE 'aaaa' LIKE '" + "%a" * 600 + "'",
    ],
)
def test_one_long_opcode_cannot_outrun_the_limit(db: Path, answer: str) -> None:
    started = time.monotonic()
    outcome = run_kind(
        "sql_query",
        answer=answer,
        base_dir=db.parent,
        database=db.name,
        query="SELECT count(*) FROM t",
        compare="answer_query",
        config=Config(sql_timeout=0.5),
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    "answer",
    [
        "sqrt 42",
        "square root of 42",
        "the log of 42",
        "not 42",
        "42 squared",
        "42 factorial",
        "\u30fc42",  # katakana prolonged sound mark: looks like a minus
        "\u250042",  # box drawing horizontal: looks like a minus
    ],
)
def test_prose_operators_and_dash_lookalikes_are_not_ignored(answer: str) -> None:
    outcome = _number(answer, value=42)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)
