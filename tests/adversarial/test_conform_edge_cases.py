"""`assay checker conform` attacked at its edges: a fixture set that proves nothing, or lies.

Every malformed fixture set is refused before any checker runs (exit 2, the path named), never a
vacuous "0/0 reproduced"; nothing a fixture holds (a symlink, a FIFO, a device, a huge file)
reaches the host or hangs the verifier; ``expected.json`` is never visible to the checker; a
checker cannot carry state from one run to the next.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assay import InvalidInput
from assay.sandbox import Sandbox
from assay.sandbox._conform import conform

ROOT = Path(__file__).resolve().parents[2]
SAT = ROOT / "examples" / "checkers" / "sat"
ASSAY = [sys.executable, "-m", "assay"]


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def assay(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ASSAY, *args], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env
    )


def fixture(root: Path, name: str, expected: object = "verified", answer: str = "1") -> Path:
    folder = root / name
    (folder / "artifacts" / "answer").mkdir(parents=True)
    (folder / "artifacts" / "answer" / "answer.txt").write_text(answer)
    if expected is not None:
        body = expected if isinstance(expected, str) and expected.startswith("{") else None
        (folder / "expected.json").write_text(body or json.dumps({"result": expected}))
    return folder


def _expecting(value: object) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        fixture(root, "x", value)

    return make


def _empty(root: Path) -> None:
    (root / "README.md").write_text("fixtures go here\n")


def _no_expected(root: Path) -> None:
    fixture(root, "good")
    fixture(root, "missing", expected=None)


def _expected_is_folder(root: Path) -> None:
    folder = fixture(root, "odd", expected=None)
    (folder / "expected.json").mkdir()


def _expected_is_fifo(root: Path) -> None:
    folder = fixture(root, "odd", expected=None)
    os.mkfifo(folder / "expected.json")


def _expected_links_out(root: Path) -> None:
    folder = fixture(root, "odd", expected=None)
    (folder / "expected.json").symlink_to("/etc/hostname")


def _fixture_links_out(root: Path) -> None:
    fixture(root, "good")
    (root / "outside").symlink_to("/etc")


def _role_links_out(root: Path) -> None:
    folder = fixture(root, "good")
    (folder / "artifacts" / "secrets").symlink_to("/root")


def _file_links_out(root: Path) -> None:
    folder = fixture(root, "good")
    (folder / "artifacts" / "answer" / "shadow").symlink_to("/etc/shadow")


def _fifo_fixture(root: Path) -> None:
    fixture(root, "good")
    os.mkfifo(root / "pipe")


def _fifo_artifact(root: Path) -> None:
    folder = fixture(root, "good")
    os.mkfifo(folder / "artifacts" / "answer" / "pipe")


def _huge_artifact(root: Path) -> None:
    folder = fixture(root, "good")
    with open(folder / "artifacts" / "answer" / "big.bin", "wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: costs no disk, counts as 300 MiB


def _huge_expected(root: Path) -> None:
    fixture(root, "big", expected='{"result": "verified", "pad": "' + "x" * 70_000 + '"}')


def _bad_role_name(root: Path) -> None:
    folder = fixture(root, "good")
    (folder / "artifacts" / "bad name").mkdir()


def _unicode_role_name(root: Path) -> None:
    folder = fixture(root, "good")
    (folder / "artifacts" / "re\u0301sume\u0301").mkdir()


def _file_for_role(root: Path) -> None:
    folder = fixture(root, "good")
    (folder / "artifacts" / "loose.txt").write_text("x")


def _misspelt_section(root: Path) -> None:
    folder = fixture(root, "good")
    (folder / "references").mkdir()


MALFORMED: dict[str, tuple[Callable[[Path], None], str]] = {
    "empty": (_empty, "no fixture folders found"),
    "no_expected_json": (_no_expected, "needs expected.json"),
    "expected_error": (_expecting("error"), "'result' must be one of"),
    "expected_pass": (_expecting("pass"), "'result' must be one of"),
    "expected_not_json": (_expecting("{verified"), "not strict JSON"),
    "expected_nan": (_expecting('{"result": "verified", "n": NaN}'), "not strict JSON"),
    "expected_array": (_expecting('{"result": ["verified"]}'), "'result' must be one of"),
    "expected_huge": (_huge_expected, "larger than"),
    "expected_is_folder": (_expected_is_folder, "must be a regular file"),
    "expected_is_fifo": (_expected_is_fifo, "a FIFO"),
    "expected_links_out": (_expected_links_out, "a symlink"),
    "fixture_links_out": (_fixture_links_out, "a symlink"),
    "role_links_out": (_role_links_out, "a symlink"),
    "file_links_out": (_file_links_out, "a symlink"),
    "fifo_beside_fixtures": (_fifo_fixture, "a FIFO"),
    "fifo_artifact": (_fifo_artifact, "a FIFO"),
    "huge_artifact": (_huge_artifact, "larger than"),
    "bad_role_name": (_bad_role_name, "not a role or key name"),
    "unicode_role_name": (_unicode_role_name, "not a role or key name"),
    "file_for_role": (_file_for_role, "one folder per name"),
    "misspelt_section": (_misspelt_section, "unexpected entry"),
}

ALWAYS_VERIFIED = (
    "import json\nopen('/output/result.json', 'w').write(json.dumps({'result': 'verified'}))\n"
)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_fixture_set_is_refused_before_anything_runs(tmp_path: Path, name: str) -> None:
    make, message = MALFORMED[name]
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    make(fixtures)
    checker = tmp_path / "checker.py"
    checker.write_text(ALWAYS_VERIFIED)
    marker = Sandbox(backend="bwrap")
    runs: list[object] = []
    original = marker.run
    marker.run = lambda *a, **k: runs.append(a) or original(*a, **k)  # type: ignore[method-assign]
    with pytest.raises(InvalidInput, match=message):
        conform(checker, fixtures, sandbox=marker)
    assert runs == [], "a checker ran before the fixture set was validated"


@pytest.mark.parametrize("name", ["empty", "no_expected_json", "fifo_artifact", "file_links_out"])
def test_the_command_exits_2_naming_the_path(tmp_path: Path, name: str) -> None:
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    MALFORMED[name][0](fixtures)
    result = assay("checker", "conform", str(SAT / "check.py"), str(fixtures))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert str(fixtures) in result.stderr
    assert "reproduced" not in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("special", ["fifo", "device"])
def test_fixtures_or_checker_that_are_special_files_do_not_hang(
    tmp_path: Path, special: str
) -> None:
    path = tmp_path / "special"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    as_fixtures = assay("checker", "conform", str(SAT / "check.py"), str(path))
    as_checker = assay("checker", "conform", str(path), str(SAT / "fixtures"))
    for result in (as_fixtures, as_checker):
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert "Traceback" not in result.stderr


def test_fixtures_inside_the_checker_folder_are_refused(tmp_path: Path) -> None:
    checker = tmp_path / "checker"
    shutil.copytree(SAT / "fixtures", checker / "fixtures")
    (checker / "check.py").write_text(ALWAYS_VERIFIED)
    result = assay("checker", "conform", str(checker), str(checker / "fixtures"))
    assert result.returncode == 2
    assert "inside the checker folder" in result.stderr


HUNT_EXPECTED = """
import json, os
found = None
for top in ("/input", "/checker", "/tmp", "/output", "/"):
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64")]
        if "expected.json" in files:
            found = os.path.join(folder, "expected.json")
            break
    if found:
        break
result = json.load(open(found))["result"] if found else "inconclusive"
open("/output/result.json", "w").write(json.dumps({"result": result, "summary": str(found)}))
"""


@pytest.mark.slow
def test_expected_json_is_never_visible_to_the_checker(sandbox: Sandbox, tmp_path: Path) -> None:
    checker = tmp_path / "hunt.py"
    checker.write_text(HUNT_EXPECTED)
    results = conform(checker, SAT / "fixtures", sandbox=sandbox)
    assert [(r.got, r.detail) for r in results] == [("inconclusive", "None")] * len(results)


STATEFUL = """
import json, os
places = ["/tmp/seen", "/output/../seen", os.path.expanduser("~/seen"), "/checker/seen",
          "/input/seen", "/var/tmp/seen", "/dev/shm/seen"]
seen = any(os.path.exists(p) for p in places)
for p in places:
    try:
        open(p, "w").write("1")
    except OSError:
        pass
# honest the first time it ever runs; says "verified" once it has seen itself before
text = open("/input/artifacts/answer/answer.txt").read()
honest = "verified" if text == "1" else "refuted"
open("/output/result.json", "w").write(json.dumps({"result": "verified" if seen else honest}))
"""


@pytest.mark.slow
def test_a_checker_cannot_carry_state_from_one_run_to_the_next(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    fixtures = tmp_path / "fixtures"
    fixture(fixtures, "right", "verified", "1")
    fixture(fixtures, "wrong_a", "refuted", "2")
    fixture(fixtures, "wrong_b", "refuted", "3")
    checker = tmp_path / "stateful.py"
    checker.write_text(STATEFUL)
    for _ in range(2):
        results = conform(checker, fixtures, sandbox=sandbox)
        assert all(r.passed for r in results), results
    assert not (tmp_path / "seen").exists()


@pytest.mark.slow
def test_exit_codes(tmp_path: Path) -> None:
    checker = tmp_path / "always_yes.py"
    checker.write_text(ALWAYS_VERIFIED)
    good = assay("checker", "conform", str(SAT / "check.py"), str(SAT / "fixtures"))
    bad = assay("checker", "conform", str(checker), str(SAT / "fixtures"))
    no_bwrap = assay(
        "checker",
        "conform",
        str(SAT / "check.py"),
        str(SAT / "fixtures"),
        env={**os.environ, "PATH": str(tmp_path)},
    )
    assert (good.returncode, bad.returncode, no_bwrap.returncode) == (0, 1, 3), (
        good.stderr,
        bad.stderr,
        no_bwrap.stderr,
    )
    assert "6/6 fixtures reproduced" in good.stdout
    assert "1/6 fixtures reproduced" in bad.stdout
