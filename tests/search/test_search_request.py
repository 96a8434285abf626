import pathspec
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


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_a_known_mode_is_kept_and_none_or_empty_means_the_default(mode: str) -> None:
    assert SearchRequest.of("proj", "query", mode=mode).mode == mode
    assert SearchRequest.of("proj", "query").mode is None
    assert SearchRequest.of("proj", "query", mode="").mode is None


def test_an_unknown_mode_is_refused_naming_the_allowed_ones() -> None:
    with pytest.raises(InvalidInputError) as caught:
        SearchRequest.of("proj", "query", mode="vector")
    assert caught.value.code == "input.invalid"
    assert "'vector'" in caught.value.message
    assert "keyword, semantic, hybrid" in caught.value.hint


def test_languages_and_globs_make_a_file_filter_that_keeps_exactly_the_matches() -> None:
    request = SearchRequest.of("proj", "q", languages=["Python", "go"], globs=["src/**"])
    files = request.files
    assert files is not None and files.languages == frozenset({"python", "go"})
    assert files.keeps("src/app/main.py", "python")
    assert not files.keeps("tests/test_main.py", "python")  # outside the glob
    assert not files.keeps("src/app/main.js", "javascript")  # another language
    only_glob = SearchRequest.of("proj", "q", globs=["*.md"]).files
    assert only_glob is not None and only_glob.keeps("docs/deep/readme.md", None)
    assert SearchRequest.of("proj", "q", languages=[], globs=[]).files is None


@pytest.mark.parametrize(
    ("languages", "globs", "says"),
    [
        (["cobol"], [], "unknown language 'cobol'"),
        ([], ["src/[oops"], "is not usable"),
        ([], ["   "], "is not usable"),
        ([f"x{i}" for i in range(60)], [], "at most 50 languages"),
    ],
)
def test_an_unknown_language_or_an_unusable_glob_is_refused(
    languages: list[str], globs: list[str], says: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        SearchRequest.of("proj", "query", languages=languages, globs=globs)
    assert says in caught.value.message


def test_file_filters_in_a_search_of_memory_entries_only_are_refused() -> None:
    with pytest.raises(InvalidInputError) as caught:
        SearchRequest.of("proj", "query", scope="memory", languages=["python"])
    assert "scope memory" in caught.value.message
    assert SearchRequest.of("proj", "query", scope="all", globs=["*.py"]).files is not None


def test_a_glob_filter_decides_like_the_indexers_gitignore_rules() -> None:
    paths = [
        "src/app.py",
        "src/deep/er/x.js",
        "tests/src/app.py",
        "docs/a.md",
        "docs/sub/b.md",
        "a/b",
        "a/x/y/b",
        "ac1.txt",
        "lib/bc2.txt",
        "README",
    ]
    for globs in (["src/**"], ["*.py", "docs/*.md"], ["a/**/b", "[ab]c?.txt"], ["*", "!*.md"]):
        files = SearchRequest.of("proj", "q", globs=globs).files
        spec = pathspec.GitIgnoreSpec.from_lines(globs)
        assert files is not None
        assert [files.keeps(p, None) for p in paths] == [spec.match_file(p) for p in paths]
