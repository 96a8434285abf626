import pytest

from repocontext.testing import FakeClock


def test_the_fake_clock_moves_only_when_told():
    clock = FakeClock(100.0)
    assert clock.now() == 100.0
    assert clock.advance(5) == 105.0
    clock.set(50.0)
    assert clock.now() == 50.0
    with pytest.raises(ValueError):
        clock.advance(-1)
