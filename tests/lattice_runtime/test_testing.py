from datetime import UTC, datetime, timedelta

import pytest

from lattice_runtime.machine import SystemClock, iso_utc
from lattice_runtime.testing import FakeClock, SeededEntropy


def test_the_fake_clock_stands_still_until_advanced():
    clock = FakeClock(datetime(2026, 5, 6, tzinfo=UTC))
    assert clock.now() == clock.now() == datetime(2026, 5, 6, tzinfo=UTC)
    assert clock.advance(2.5) == datetime(2026, 5, 6, 0, 0, 2, 500_000, tzinfo=UTC)
    assert clock.now() == datetime(2026, 5, 6, 0, 0, 2, 500_000, tzinfo=UTC)


def test_the_fake_clock_can_step_on_every_reading_and_never_goes_back():
    clock = FakeClock(datetime(2026, 5, 6, tzinfo=UTC), step=timedelta(seconds=1))
    assert [clock.now().second for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(-1)


def test_seeded_entropy_repeats_for_the_same_seed():
    assert SeededEntropy(3)(8) == SeededEntropy(3)(8)
    assert SeededEntropy(3)(8) != SeededEntropy(4)(8)
    assert len(SeededEntropy()(5)) == 5


def test_the_system_clock_reads_aware_utc_time():
    assert SystemClock().now().tzinfo is UTC


def test_iso_utc_writes_milliseconds_with_a_z_and_reads_naive_times_as_utc():
    aware = datetime(2026, 1, 2, 4, 4, 5, 678_900, tzinfo=UTC).astimezone()
    assert iso_utc(aware) == "2026-01-02T04:04:05.678Z"
    assert iso_utc(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05.000Z"
