import pytest

from repocontext.errors import InvalidInputError
from repocontext.search.request import MAX_K, SearchRequest


@pytest.mark.parametrize("k", [0, -1, MAX_K + 1, 10**12])
def test_a_k_out_of_range_is_refused_naming_k_and_its_range(k: int) -> None:
    with pytest.raises(InvalidInputError) as caught:
        SearchRequest.of("proj", "query", k)
    assert caught.value.code == "input.invalid"
    assert f"k must be in 1..{MAX_K}" in caught.value.message


@pytest.mark.parametrize(
    ("scope", "picked"),
    [("code", "code"), ("memory", "memory"), ("all", "all"), ("bogus", "code"), (None, "code")],
)
def test_an_unknown_scope_falls_back_to_code(scope: str | None, picked: str) -> None:
    assert SearchRequest.of("proj", "query", 1, scope).scope == picked


def test_a_request_in_range_keeps_what_was_asked() -> None:
    assert SearchRequest.of("proj", "parse config", MAX_K, "all") == SearchRequest(
        "proj", "parse config", MAX_K, "all"
    )


def test_an_over_long_query_and_a_malformed_repo_id_are_refused() -> None:
    with pytest.raises(InvalidInputError) as long_query:
        SearchRequest.of("proj", "q" * 10_000)
    assert "too long" in long_query.value.message and len(long_query.value.message) < 200
    with pytest.raises(InvalidInputError):
        SearchRequest.of("", "query")
