import itertools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from repocontext.testing_pg import PostgresCluster

# Hypothesis' too_slow health check times input generation by the wall clock: on a loaded
# 2-core machine one draw took 35 s (a scheduling stall, not a slow strategy) and failed a
# merge-law property. Speed is the benchmarks' business, never a test's.
settings.register_profile("repocontext", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("repocontext")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def _hold_run_lock(
    data_dir: Path, repo_id: str, seconds: float | None = None, store_url: str = ""
) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run lock of ``repo_id`` in the store of ``data_dir`` (or
    at ``store_url``), as an index run in it does, until the block ends or for ``seconds``."""
    hold = "sys.stdin.read()" if seconds is None else f"time.sleep({seconds})"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from repocontext.store import Store\n"
            "with Store.open(sys.argv[1], store_url=sys.argv[2] or None) as s, "
            f"s.exclusive('index:{repo_id}') as held:\n"
            f"    print(held, flush=True); {hold}",
            str(data_dir),
            store_url,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        yield holder
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.kill()  # (no-op once it has ended)
        holder.wait(30)


@pytest.fixture
def run_lock_holder() -> Callable[..., AbstractContextManager[subprocess.Popen[str]]]:
    """Start another process holding a repository's run lock: ``with run_lock_holder(data_dir,
    repo_id) as process``."""
    return _hold_run_lock


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL cluster for the whole session (tests use their own tables)."""
    with PostgresCluster() as cluster:
        yield cluster


_PREFIXES = itertools.count()


@pytest.fixture
def pg_store_url(pg_cluster: PostgresCluster) -> Callable[..., str]:
    """``pg_store_url(name="data")``: the URL of this test's store ``name`` on the session's
    cluster (tables no other test uses; the same name gives the same store)."""
    test = f"t{os.getpid()}_{next(_PREFIXES)}_"

    def url(name: str = "data", *, retry_seconds: float | None = None) -> str:
        return pg_cluster.store_url(f"{test}{name}_", retry_seconds=retry_seconds)

    return url


@pytest.fixture
def pg_url(pg_store_url: Callable[..., str]) -> str:
    """A store URL on the session's cluster whose tables no other test uses."""
    return pg_store_url()
