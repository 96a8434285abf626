import pytest

from repocontext.store import Store
from repocontext.testing import FakeClock


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock):
    with Store.open(tmp_path / "data", clock=clock, tombstone_grace_seconds=3600) as opened:
        yield opened
