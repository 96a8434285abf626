import pytest

from repocontext.store import Store
from repocontext.testing import FakeClock


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture(params=["lmdb", "postgresql"])
def backend(request) -> str:
    """The store engine a contract test runs on (every test using ``store`` runs on both)."""
    return request.param


@pytest.fixture
def open_store(tmp_path, clock, backend, request):
    """``open_store(name="data", **options)``: open this test's store ``name`` on the test's
    backend (the same name opens the same store again), with options of ``Store.open``."""
    urls = request.getfixturevalue("pg_store_url") if backend == "postgresql" else None

    def opener(name="data", **options):
        options.setdefault("clock", clock)
        url = urls(name) if urls is not None else None
        return Store.open(tmp_path / name, store_url=url, **options)

    return opener


@pytest.fixture
def store(open_store):
    with open_store(tombstone_grace_seconds=3600) as opened:
        yield opened
