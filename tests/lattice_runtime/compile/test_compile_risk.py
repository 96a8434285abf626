import pytest
from hypothesis import given
from hypothesis import strategies as st

from lattice_runtime.compile import HIGH_RISK_STEMS, Risk, classify_risk, raise_risk
from lattice_runtime.errors import TaskInvalidError

RISKS: tuple[Risk, ...] = ("low", "medium", "high")


@pytest.mark.parametrize(
    "goal",
    [
        "Fix the auth redirect",
        "Harden SECURITY headers",
        "Rotate the password hash",
        "Check permission before delete",
        "Add a migration for the orders table",
        "Remove the concurrency bug in the cache",
        "Swap the crypt backend",
        "Use cryptography for the tokens",
        "Refund a failed payment",
    ],
)
def test_each_sensitive_keyword_makes_the_goal_high_risk(goal: str) -> None:
    assert classify_risk(goal) == "high"


@pytest.mark.parametrize(
    "goal",
    [
        "Require authentication on /admin",
        "Check permissions for uploads",
        "Use cryptographic nonces",
        "Squash old migrations",
        "Retry payments twice",
        "Fix reset_password when the link expired",
        "Fix resetPassword in the client",
        "Add user-auth headers",
        "Support OAuth login",
    ],
)
def test_a_word_that_starts_with_a_stem_counts(goal: str) -> None:
    assert classify_risk(goal) == "high"


@pytest.mark.parametrize(
    "goal",
    [
        "Return 401 for unauthorized requests",
        "Rename the coauthor field",
        "Migrate the parser to dataclasses",
        "Make the loader concurrent",
        "Fix the decrypted preview label",
    ],
)
def test_a_stem_inside_a_word_or_a_related_word_does_not_count(goal: str) -> None:
    assert classify_risk(goal) == "medium"


@pytest.mark.parametrize(
    "goal",
    [
        "Fix a typo in the CLI help",
        "fix typo in greeting",
        "Fix typos in comments",
        "Format the code",
        "Fix formatting of utils.py",
        "Sort imports in app.py",
        "Update the README with the new flag",
        "update readme",
        "Update the documentation of the loader",
        "Update documentation",
    ],
)
def test_cosmetic_goals_are_low_risk(goal: str) -> None:
    assert classify_risk(goal) == "low"


def test_a_sensitive_word_wins_over_a_cosmetic_phrase() -> None:
    assert classify_risk("Fix a typo in the authentication docs") == "high"


@pytest.mark.parametrize(
    "goal", ["Refactor the parser", "Fix the typography module", "Update the docs index"]
)
def test_other_goals_are_medium_risk(goal: str) -> None:
    assert classify_risk(goal) == "medium"


@pytest.mark.parametrize(
    ("current", "floor", "expected"),
    [
        ("low", None, "low"),
        ("low", "medium", "medium"),
        ("low", "high", "high"),
        ("medium", "low", "medium"),
        ("high", "low", "high"),
        ("high", "medium", "high"),
        ("medium", "medium", "medium"),
    ],
)
def test_raise_risk_raises_and_never_lowers(current: Risk, floor: Risk, expected: Risk) -> None:
    assert raise_risk(current, floor) == expected


def test_raise_risk_refuses_an_unknown_risk() -> None:
    with pytest.raises(TaskInvalidError):
        raise_risk("medium", "critical")  # type: ignore[arg-type]  # the bad value is the test


@given(st.sampled_from(RISKS), st.sampled_from(RISKS))
def test_raising_is_monotone_and_commutative(current: Risk, floor: Risk) -> None:
    raised = raise_risk(current, floor)
    assert RISKS.index(raised) == max(RISKS.index(current), RISKS.index(floor))
    assert raised == raise_risk(floor, current)


@given(st.text(max_size=200), st.sampled_from(HIGH_RISK_STEMS))
def test_appending_a_sensitive_word_always_gives_high_risk(prefix: str, stem: str) -> None:
    assert classify_risk(f"{prefix} {stem.upper()}") == "high"
    assert classify_risk(f"{prefix} {stem}s") == "high"
