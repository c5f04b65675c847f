"""Scale-out: the same run requests on a Dask cluster the test starts give the local pool's results."""

from __future__ import annotations

from pathlib import Path

import pytest

from paperproof.catalogue.archive import bundled_root
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.run_result import TIMING_FIELDS
from paperproof.fixtures.synth import synthesize
from paperproof.runner.distributed import DaskExecutor, make_executor
from paperproof.runner.executor import Executor, ResultCache, RunRequest

distributed = pytest.importorskip("distributed")


def specimen_requests(count: int = 4) -> list[RunRequest]:
    root = bundled_root() / "repos" / "paperproof-specimens+dynamics-maps"
    requests = []
    for entry in extract_repo(root, "dynamics-maps").entries:
        fixtures = synthesize(entry)
        if fixtures.cases:
            requests.append(RunRequest(entry, fixtures, str(Path(root).resolve())))
    assert len(requests) >= count
    return requests[:count]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  scheduler_port=0, dashboard_address=":0", worker_dashboard_address=":0") as local:
        yield local


def test_a_dask_cluster_gives_the_local_pools_results(cluster, tmp_path):
    requests = specimen_requests()
    with Executor(workers=2) as pool:
        local = list(pool.run(requests))
    with DaskExecutor(cluster.scheduler_address, ResultCache(tmp_path / "cache")) as remote:
        spread = list(remote.run(requests))
        assert remote.executed == len(requests)
    # the same results but for how long each run took
    assert [r.model_dump(exclude=set(TIMING_FIELDS)) for r in spread] == [r.model_dump(exclude=set(TIMING_FIELDS)) for r in local]
    assert all(r.end == "completed" and r.isolation.pid == "namespace" for r in spread)
    with DaskExecutor(cluster.scheduler_address, ResultCache(tmp_path / "cache")) as again:
        assert list(again.run(requests)) == spread and again.executed == 0  # the client keeps the cache


def test_the_local_pool_stays_the_default(tmp_path):
    with make_executor(None, ResultCache(None)) as default:
        assert isinstance(default, Executor)
