"""A 30-character pattern in an item freezes the judging process and eats its memory.

Every ``pattern`` a check takes (``answer_regex``, ``file_contains``, ``python``/``shell``) is
compiled by ``regex.compile`` when the item is *parsed* (``validate_pattern``), before any time
limit applies. Nested counted repeats expand at compile time: ``(?:a{1000}){1000}`` takes
seconds and hundreds of MiB, ``(?:a{1000}){2000}`` about 6 s and 800 MiB, and
``(?:(?:a{1000}){1000}){1000}`` grows by ~250 MiB a second until the host runs out. The compile
holds the GIL throughout, so ``assay serve``'s event loop (every request, ``/healthz``) stops
with it, and the MCP server (whose client is the agent being judged) likewise. The search time
limit (``regex_timeout``) never gets a chance to run.

A pattern's compiled size must be bounded before it is compiled (refuse counted repeats whose
nested product passes a cap, naming the field), or compile it where it can be stopped.
Each case runs in a child process with a memory cap and a deadline, so the test ends either way.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any

import pytest

DEADLINE = 10.0
MEMORY = 1536 * 1024 * 1024

PROBE = """
import json, sys
from assay import Config, InvalidInput
from assay.episodes import parse_episode
try:
    parse_episode(json.loads(sys.argv[1]), root=None, config=Config())
except InvalidInput as exc:
    print("refused:", exc)
else:
    print("accepted")
"""

CASES: dict[str, dict[str, Any]] = {
    "answer_regex, three levels": {
        "answer": "a",
        "checks": [{"kind": "answer_regex", "pattern": "(?:(?:a{1000}){1000}){1000}"}],
    },
    "answer_regex, two levels": {
        "answer": "a",
        "checks": [{"kind": "answer_regex", "pattern": "x(?:a{1000}){5000}"}],
    },
    "python check output pattern": {
        "checks": [{"kind": "python", "code": "print(1)", "pattern": "(?:(?:b{999}){999}){999}"}],
    },
}


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_parsing_an_item_is_bounded_whatever_its_pattern(case: str) -> None:
    item = json.dumps({"id": "p", **CASES[case]})
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, item],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            preexec_fn=_capped,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"parsing one item did not end within {DEADLINE:g}s (the GIL is held)")
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.startswith("refused:") and "pattern" in done.stdout, done.stdout
