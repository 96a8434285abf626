"""The kernel's rules one at a time: goal terms, relevance, slices, path hints and scope."""

from collections.abc import Callable
from pathlib import Path

import pytest

from lattice_runtime.compile.task import Scope, TaskIR
from lattice_runtime.errors import TaskInvalidError
from lattice_runtime.kernel import (
    PATH_MATCH,
    REFERENCE_MATCH,
    SEARCH_WEIGHT,
    SYMBOL_MATCH,
    TEST_BONUS,
    ContextKernel,
    page_id,
)
from lattice_runtime.kernel.faults import resolve_path_hint
from lattice_runtime.kernel.goal import GoalTerms, words_match
from lattice_runtime.kernel.pages import slice_bounds
from lattice_runtime.kernel.scope import ScopeFilter
from repocontext.index import FileNode

Task = Callable[..., TaskIR]


def test_goal_terms_split_identifiers_and_drop_filler_words() -> None:
    goal = GoalTerms.of("Fix the TokenStore so consume_reset_token works in auth.py")
    assert goal.terms == {"token", "store", "consume", "reset", "auth"}
    assert goal.identifiers == {"tokenstore", "consume_reset_token", "auth"}


@pytest.mark.parametrize(("a", "b"), [("token", "tokens"), ("consumed", "consume"), ("ab", "ab")])
def test_words_match_when_equal_or_one_prefixes_the_other_by_four_characters(
    a: str, b: str
) -> None:
    assert words_match(a, b)
    assert not words_match("log", "login")  # (a three-letter prefix is too weak)
    assert not words_match("token", "broken")


def test_a_symbol_matches_by_exact_name_containment_or_all_its_parts() -> None:
    goal = GoalTerms.of("consume_reset_token must reject an expired reset token")
    assert goal.symbol_strength("consume_reset_token") == 3
    assert goal.symbol_strength("reset_token") == 2  # inside a goal identifier
    assert goal.symbol_strength("test_expired_token_is_rejected") == 1  # every part named
    assert goal.symbol_strength("TokenStore") == 0  # "store" is not in the goal
    assert goal.symbol_strength("__init__") == 0
    assert goal.symbol_strength("ok") == 0


def test_the_fused_score_is_8_5_2_2_plus_the_normalised_search_score(
    vault: Path, task: Task
) -> None:
    assert (PATH_MATCH, SYMBOL_MATCH, REFERENCE_MATCH, TEST_BONUS) == (8, 5, 2, 2)
    with ContextKernel.open(vault, task()) as kernel:
        ranking = kernel.ranking
    test = ranking.get("tests/test_tokens.py")
    source = ranking.get("src/vault/tokens.py")
    docs = ranking.get("docs/tokens.md")
    assert test is not None and source is not None and docs is not None
    assert test.kernel_score == 8 + 5 + 2 + 2  # path, symbol, imports tokens.py, a test
    assert source.kernel_score == 8 + 5
    assert docs.kernel_score == 8
    assert ranking.files[0].score == pytest.approx(ranking.files[0].kernel_score + SEARCH_WEIGHT)
    assert all(0 <= f.score - f.kernel_score <= SEARCH_WEIGHT for f in ranking.files)
    assert ranking.get("src/vault/login.py") is None  # nothing about it matches the goal
    assert [f.score for f in ranking.files] == sorted(
        (f.score for f in ranking.files), reverse=True
    )


def _lines(sizes: list[int]) -> list[str]:
    return ["x" * (size - 1) + "\n" for size in sizes]


def test_a_slice_grows_around_the_focus_in_whole_lines_up_to_the_limit() -> None:
    lines = _lines([100] * 200)
    assert slice_bounds(lines, (100, 100), limit=1000) == (95, 104)
    assert slice_bounds(lines, (1, 3), limit=1000) == (1, 10)
    assert slice_bounds(lines, (199, 200), limit=1000) == (191, 200)
    assert slice_bounds(lines, None, limit=1000) == (1, 10)
    assert slice_bounds(_lines([5000, 3000, 800]), (2, 2), limit=4000) == (2, 3)
    assert slice_bounds(_lines([9000]), (1, 1), limit=6000) == (1, 1)  # a long line alone
    assert slice_bounds([], None) == (1, 1)


def test_page_ids_name_the_path_the_fingerprint_and_a_slice_s_lines() -> None:
    assert page_id("src/a.py", "abc") == "file:src/a.py:abc"
    assert page_id("src/a.py", "abc", (3, 9)) == "file:src/a.py:abc:L3-L9"


def _nodes(*paths: str) -> dict[str, FileNode]:
    return {path: FileNode(path, "python", "0" * 40, has_content=True) for path in paths}


def test_a_path_hint_prefers_exact_then_tail_then_name_then_part_then_similar() -> None:
    nodes = _nodes("src/app/models.py", "src/models.py", "lib/app/models.py", "src/views.py")
    assert resolve_path_hint("src/models.py", nodes) == "src/models.py"
    assert resolve_path_hint("app/models.py", nodes) == "lib/app/models.py"  # shortest tail
    assert resolve_path_hint("models.py", nodes) == "src/models.py"
    assert resolve_path_hint("VIEWS", nodes) == "src/views.py"
    assert resolve_path_hint("src/veiws.py", nodes) == "src/views.py"
    assert resolve_path_hint("/src\\views.py", nodes) == "src/views.py"
    assert resolve_path_hint("zzz/qqq.rs", nodes) is None
    assert resolve_path_hint("  ", nodes) is None


def test_scope_globs_are_git_style_and_an_unusable_glob_is_refused() -> None:
    scope = ScopeFilter(Scope(include=("src/**", "*.md"), exclude=("src/vendor/",)))
    assert "src/a/b.py" in scope and "docs/x.md" in scope
    assert "src/vendor/lib.py" not in scope and "tests/test_a.py" not in scope
    assert 3 not in scope
    for bad in ("[", "!", "", "# a comment"):
        with pytest.raises(TaskInvalidError):
            ScopeFilter(Scope(include=(bad,)))


def test_an_unusable_scope_fails_before_the_repository_is_indexed(vault: Path, task: Task) -> None:
    with pytest.raises(TaskInvalidError):
        ContextKernel.open(vault, task(exclude=("[",)))
    assert not (vault / ".lattice").exists()
