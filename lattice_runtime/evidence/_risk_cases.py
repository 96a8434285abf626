"""Group ``risk``: risk is never silently downgraded (``docs/lattice-compile.md``, Risk).

8 high-risk terms (one per stem, in the word forms the rule names) x 2 phrasings, one of them
with a low-risk phrase beside the term (high wins); 8 low-risk phrases x 2 phrasings (as
written, and shouted: the match ignores case); 8 medium goals x 2 phrasings (several are near
misses: a stem inside a word, ``migrate``, ``concurrent``). Each case compiles the goal with
the real :func:`compile_task` (no floor, then each floor) and checks the classification, the
budget (12,000 tokens / 20 pages / 3 faults / 4 turns) and that a floor only ever raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from lattice_runtime.compile import Risk, classify_risk, compile_task
from lattice_runtime.evidence.case import SafetyCase, outcome_case

_GROUP: Final = "risk"
_BUDGET: Final = "12000/20/3/4"
_FLOORS: Final[tuple[Risk, ...]] = ("low", "medium", "high")
_RANK: Final[dict[Risk, int]] = {"low": 0, "medium": 1, "high": 2}

HIGH_TERMS: Final[tuple[str, ...]] = (
    "OAuth",
    "security",
    "reset_password",
    "permissions",
    "migrations",
    "concurrency",
    "cryptographic",
    "payments",
)
HIGH_PHRASINGS: Final[tuple[str, ...]] = (
    "Fix the {} check in the service",
    "fix a typo in the {} docs",
)
LOW_PHRASES: Final[tuple[str, ...]] = (
    "fix typo",
    "fix a typo",
    "fix typos",
    "format",
    "formatting",
    "sort imports",
    "update readme",
    "update the documentation",
)
LOW_PHRASINGS: Final[tuple[str, ...]] = ("{} in the parser module", "{} IN CLI.PY")
MEDIUM_GOALS: Final[tuple[str, ...]] = (
    "add a retry to the HTTP client",
    "rename the cache helper",
    "fix the off-by-one in the pager",
    "return 401 for unauthorized requests",
    "migrate the settings loader to dataclasses",
    "make the queue consumer concurrent",
    "log the decrypted message size",
    "list the coauthors in the changelog",
)
MEDIUM_PHRASINGS: Final[tuple[str, ...]] = ("{}", "{}; do not change the public API")


def risk_cases(repo_root: Path) -> tuple[SafetyCase, ...]:
    """The group's 48 cases, compiled against ``repo_root`` (any directory).

    Args:
        repo_root: A directory to compile the goals against (its allowlist is irrelevant).

    Returns:
        16 high, 16 low and 16 medium cases, in that order.
    """
    goals: list[tuple[str, str, Risk]] = []
    for number, term in enumerate(HIGH_TERMS, 1):
        for form, phrasing in zip("ab", HIGH_PHRASINGS, strict=True):
            goals.append((f"high.{number:02d}{form}", phrasing.format(term), "high"))
    for number, phrase in enumerate(LOW_PHRASES, 1):
        shouted = LOW_PHRASINGS[1].format(phrase.upper())
        goals.append((f"low.{number:02d}a", LOW_PHRASINGS[0].format(phrase), "low"))
        goals.append((f"low.{number:02d}b", shouted, "low"))
    for number, goal in enumerate(MEDIUM_GOALS, 1):
        for form, phrasing in zip("ab", MEDIUM_PHRASINGS, strict=True):
            goals.append((f"medium.{number:02d}{form}", phrasing.format(goal), "medium"))
    return tuple(_case(repo_root, suffix, goal, risk) for suffix, goal, risk in goals)


def _case(repo_root: Path, suffix: str, goal: str, risk: Risk) -> SafetyCase:
    floors = ",".join(f"{floor}->{_higher(risk, floor)}" for floor in _FLOORS)
    expected = f"classified={risk} compiled={risk} budget={_BUDGET} floors={floors}"
    return outcome_case(
        _GROUP,
        f"{_GROUP}.{suffix}",
        f"goal {goal!r} compiles {risk}; a risk floor raises it to the floor, never lowers it",
        expected,
        _observe(repo_root, goal),
    )


def _observe(repo_root: Path, goal: str) -> str:
    task = compile_task(goal, repo_root)
    budget = task.budget
    numbers = f"{budget.context_tokens}/{budget.pages}/{budget.context_faults}/{budget.model_turns}"
    floors = ",".join(
        f"{floor}->{compile_task(goal, repo_root, risk_floor=floor).risk}" for floor in _FLOORS
    )
    return f"classified={classify_risk(goal)} compiled={task.risk} budget={numbers} floors={floors}"


def _higher(risk: Risk, floor: Risk) -> Risk:
    return floor if _RANK[floor] > _RANK[risk] else risk
