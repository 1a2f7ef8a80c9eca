"""The Ray executor on a real local Ray instance (2 CPUs, loopback, no dashboard): the same
bytes as the local pool, in the same order. Starting Ray costs about ten seconds here."""

from __future__ import annotations

import pytest

from assay import Config, Status
from assay.executors import Job, LocalExecutor, make_executor
from tests.executors.items import answer_item, jobs, sleeper

pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'assay[ray]'")


@pytest.mark.slow
@pytest.mark.bwrap
def test_ray_on_a_local_instance_gives_the_local_pools_bytes() -> None:
    """One instance for two claims (starting Ray is the cost): the same bytes as the local
    pool, and a hung item cancelled into an error while the items around it are judged."""
    import ray

    config = Config()
    work = jobs(400)
    work.append(
        Job(
            {
                "id": "math",
                "checks": [{"kind": "answer_math", "value": "1/2"}],
                "answer": "\\boxed{\\frac{2}{4}}",
            },
            "line 401",
        )
    )
    with LocalExecutor(root=None, config=config, jobs=2) as local:
        expected = [j.line for j in local.map(work)]
    with make_executor("ray", root=None, config=config, jobs=2, chunk_size=16) as executor:
        assert ray.is_initialized()
        got = [j.line for j in executor.map(work)]
        again = [j.line for j in executor.map(work[:40])]
        hung = [Job(answer_item(i), f"line {i + 1}") for i in range(6)]
        hung[3] = Job(sleeper("hung", 60), "line 4")
        with make_executor("ray", root=None, config=config, timeout=3, chunk_size=2) as short:
            results = [j.result for j in short.map(hung)]
        assert ray.is_initialized(), "an executor that did not start the instance stopped it"
    assert not ray.is_initialized(), "the instance the executor started was not shut down"
    assert got == expected
    assert again == expected[:40]
    assert '"status": "verified"' in got[-1]
    assert (results[3].id, results[3].status) == ("hung", Status.ERROR)
    assert results[3].outcomes[0].detail == (
        "line 4: the worker did not answer within 3 s (killed and replaced)"
    )
    assert [r.id for r in results] == ["e0", "e1", "e2", "hung", "e4", "e5"]
    assert Status.ERROR not in {r.status for i, r in enumerate(results) if i != 3}
