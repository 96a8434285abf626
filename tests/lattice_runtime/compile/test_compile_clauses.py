from hypothesis import given
from hypothesis import strategies as st

from lattice_runtime.compile import (
    AcceptanceCriterion,
    acceptance_criteria,
    extract_invariants,
    split_clauses,
)

MULTI_LINE_GOAL = """Password reset: a valid token is consumed only once.
- an expired token stays rejected
* and a successful reset records an audit event
1. Then keep login unchanged; do not change the public API
2) preserve the audit log format, and don't touch the migrations
- [ ] or add a regression test
- ok
- A valid token is consumed only once
"""


def test_a_multi_line_goal_with_bullets_splits_into_clauses_in_order() -> None:
    assert split_clauses(MULTI_LINE_GOAL) == (
        "Password reset",
        "a valid token is consumed only once",
        "an expired token stays rejected",
        "a successful reset records an audit event",
        "keep login unchanged",
        "do not change the public API",
        "preserve the audit log format",
        "don't touch the migrations",
        "add a regression test",
    )


def test_criteria_are_numbered_from_ac_1_in_goal_order() -> None:
    criteria = acceptance_criteria("Fix the parser. Add a test")
    assert criteria == (
        AcceptanceCriterion(id="ac-1", text="Fix the parser"),
        AcceptanceCriterion(id="ac-2", text="Add a test"),
    )


def test_invariants_are_the_do_not_dont_and_preserve_phrases_to_the_clause_end() -> None:
    assert extract_invariants(MULTI_LINE_GOAL) == (
        "do not change the public API",
        "preserve the audit log format",
        "don't touch the migrations",
    )


def test_an_invariant_starts_at_its_marker_inside_a_clause() -> None:
    goal = (
        "Fix the cache but do NOT evict pinned entries\nKeep ordering and Preserve insertion order"
    )
    assert extract_invariants(goal) == (
        "do NOT evict pinned entries",
        "Preserve insertion order",
    )


def test_a_curly_apostrophe_dont_is_an_invariant() -> None:
    assert extract_invariants("Fix it, don\u2019t rename the module") == (
        "don\u2019t rename the module",
    )


def test_a_bare_marker_is_not_an_invariant() -> None:
    assert extract_invariants("Fix the loader; do not") == ()


def test_repeated_invariants_keep_the_first_spelling() -> None:
    goal = "Do not touch tests\n- do not touch TESTS"
    assert extract_invariants(goal) == ("Do not touch tests",)


def test_dots_colons_and_commas_inside_words_do_not_split() -> None:
    assert split_clauses("Bump to 2.0.1 at 10:30 in a.b,c") == ("Bump to 2.0.1 at 10:30 in a.b,c",)


def test_clauses_with_fewer_than_three_letters_or_digits_are_dropped() -> None:
    assert split_clauses("ok; a b; abc; -- ; 12") == ("abc",)


def test_leading_connectors_are_stripped_repeatedly_in_any_case() -> None:
    assert split_clauses("AND then Or fix it\nthen, add docs\nandrew stays") == (
        "fix it",
        "add docs",
        "andrew stays",
    )


def test_a_blank_goal_has_no_clauses() -> None:
    assert split_clauses("  \n\t\n") == ()


@given(st.text(max_size=400))
def test_every_clause_has_three_alphanumerics_and_no_case_insensitive_repeats(text: str) -> None:
    clauses = split_clauses(text)
    assert all(sum(ch.isalnum() for ch in clause) >= 3 for clause in clauses)
    assert len({clause.casefold() for clause in clauses}) == len(clauses)
    assert all(clause == clause.strip() and "\n" not in clause for clause in clauses)


@given(st.text(max_size=400))
def test_every_invariant_comes_from_a_clause(text: str) -> None:
    clauses = split_clauses(text)
    for invariant in extract_invariants(text):
        assert any(clause.endswith(invariant) for clause in clauses)
