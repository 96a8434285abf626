"""How a file's share is divided among its tiles (``repocontext.pack.scoring.file_parts``)."""

import math

from hypothesis import given
from hypothesis import strategies as st

from repocontext.pack.scoring import SHARE_BY_SCORE, file_parts

tiles = st.lists(
    st.tuples(st.floats(0, 100, allow_nan=False), st.integers(1, 5000)), min_size=1, max_size=30
)


@given(tiles)
def test_the_parts_of_a_file_are_never_negative_and_add_up_to_the_whole(pairs):
    parts = file_parts([s for s, _ in pairs], [n for _, n in pairs])
    assert all(p >= 0 for p in parts)
    assert math.isclose(sum(parts), 1.0)


@given(tiles)
def test_a_file_no_tile_of_which_matches_is_divided_by_size(pairs):
    sizes = [n for _, n in pairs]
    parts = file_parts([0.0] * len(pairs), sizes)
    assert all(math.isclose(p, n / sum(sizes)) for p, n in zip(parts, sizes, strict=True))


def test_a_matching_tile_takes_the_score_part_and_its_size_part():
    parts = file_parts([3.0, 0.0, 1.0], [100, 100, 200])
    assert math.isclose(parts[0], SHARE_BY_SCORE * 0.75 + (1 - SHARE_BY_SCORE) * 0.25)
    assert math.isclose(parts[1], (1 - SHARE_BY_SCORE) * 0.25)  # the changed lines may be here
    assert parts[0] > parts[2] > parts[1]
