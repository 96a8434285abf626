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
def store_url(backend, request) -> str | None:
    """``None`` for LMDB, else a fresh PostgreSQL store URL."""
    return request.getfixturevalue("pg_url") if backend == "postgresql" else None


@pytest.fixture
def open_store(tmp_path, clock, store_url):
    """Open the test's store (the same one on every call), with options of ``Store.open``."""

    def opener(**options):
        options.setdefault("clock", clock)
        return Store.open(tmp_path / "data", store_url=store_url, **options)

    return opener


@pytest.fixture
def store(open_store):
    with open_store(tombstone_grace_seconds=3600) as opened:
        yield opened
