import pytest

from repocontext.errors import InvalidInputError
from repocontext.pack.request import MAX_BUDGET, MAX_TOP, ContextRequest


@pytest.mark.parametrize(
    ("field", "value", "limits"),
    [
        ("top", 0, f"1..{MAX_TOP}"),
        ("top", -1, f"1..{MAX_TOP}"),
        ("top", MAX_TOP + 1, f"1..{MAX_TOP}"),
        ("budget", 0, f"1..{MAX_BUDGET}"),
        ("budget", MAX_BUDGET + 1, f"1..{MAX_BUDGET}"),
    ],
)
def test_top_and_budget_out_of_range_are_refused_naming_field_and_range(
    field: str, value: int, limits: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        ContextRequest.of("proj", "task", **{field: value})
    assert f"{field} must be in {limits}" in caught.value.message


@pytest.mark.parametrize(
    ("detail", "picked"),
    [
        ("paths", "paths"),
        ("outline", "outline"),
        ("slices", "slices"),
        ("x", "auto"),
        (None, "auto"),
    ],
)
def test_an_unknown_detail_falls_back_to_auto(detail: str | None, picked: str) -> None:
    assert ContextRequest.of("proj", "task", detail=detail).detail == picked


def test_receipts_known_files_and_an_empty_session_are_normalised() -> None:
    request = ContextRequest.of(
        "proj", "task", top=MAX_TOP, budget=MAX_BUDGET, seen=["a", "a"], known=["p@h"], session=""
    )
    assert (request.top, request.budget) == (MAX_TOP, MAX_BUDGET)
    assert (request.seen, request.known, request.session) == (frozenset({"a"}), ("p@h",), None)


def test_an_over_long_task_is_refused_with_a_short_message() -> None:
    with pytest.raises(InvalidInputError) as caught:
        ContextRequest.of("proj", "t" * 100_000)
    assert "too long" in caught.value.message and len(caught.value.message) < 200


def test_the_mode_of_the_search_behind_a_bundle_is_checked_like_a_search_mode() -> None:
    assert ContextRequest.of("proj", "task", mode="keyword").mode == "keyword"
    assert ContextRequest.of("proj", "task").mode is None
    with pytest.raises(InvalidInputError) as caught:
        ContextRequest.of("proj", "task", mode="dense")
    assert "unknown mode 'dense'" in caught.value.message
    assert "keyword, semantic, hybrid" in caught.value.hint
