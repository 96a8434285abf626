import pytest

from repocontext.arguments import (
    ECHO_CHARS,
    checked_range,
    memory_key,
    new_repo_id,
    quoted,
    record_key,
    repo_id,
    repo_path,
)
from repocontext.errors import InvalidInputError, InvalidKeyError


def test_quoted_keeps_a_short_value_whole_and_cuts_a_long_one() -> None:
    assert quoted("proj") == "'proj'"
    long = quoted("x" * 1_000_000)
    assert long.startswith("'" + "x" * ECHO_CHARS + "'…") and long.endswith("(1000000 characters)")
    assert len(long) < ECHO_CHARS + 40


def test_checked_range_names_the_field_and_its_range() -> None:
    assert checked_range("k", 5, 1, 100) == 5
    with pytest.raises(InvalidInputError, match=r"k must be in 1\.\.100, got 0"):
        checked_range("k", 0, 1, 100)


@pytest.mark.parametrize("good", ["proj", "a", "a-1.b_c", "R" * 128, "0x"])
def test_plain_names_are_new_repo_ids(good: str) -> None:
    assert new_repo_id(good) == good


@pytest.mark.parametrize(
    "bad", ["", ".", "..", "../evil", "a/b", "a b", "-a", "_a", "é", "R" * 129]
)
def test_other_ids_are_not_new_repo_ids(bad: str) -> None:
    with pytest.raises(InvalidInputError):
        new_repo_id(bad)


def test_a_lookup_id_needs_only_to_fit_a_key() -> None:
    assert repo_id("a b") == "a b"
    for bad in ("", " a", "a\x00", "r" * 129):
        with pytest.raises(InvalidInputError):
            repo_id(bad)


def test_a_malformed_key_is_an_invalid_key_and_another_family_the_wrong_family() -> None:
    assert record_key("repo/p/file/a.py").path == "a.py"
    assert memory_key("repo/p/mem/t/i") == "repo/p/mem/t/i"
    for bad in ("nope", "repo/p/mem/t/a\x00", "k" * 600):
        with pytest.raises(InvalidKeyError) as caught:
            memory_key(bad)
        assert len(caught.value.message) < 300
    with pytest.raises(InvalidInputError) as wrong:
        memory_key("repo/p/file/a.py")
    assert wrong.value.code == "memory.wrong_family"


def test_a_path_with_a_nul_byte_or_too_long_is_refused() -> None:
    assert repo_path("src/a.py") == "src/a.py"
    for bad in ("a\x00b", "p" * 5000):
        with pytest.raises(InvalidInputError) as caught:
            repo_path(bad)
        assert len(caught.value.message) < 200
