"""Clauses: a goal cut into acceptance criteria and invariants, with no task vocabulary.

The rules are purely syntactic, so any goal in any domain compiles the same way:

1. Lines are split first; a list bullet at the start of a line (``-``, ``*``, ``+``, ``•``,
   ``1.``, ``1)``, optionally followed by a Markdown checkbox ``[ ]``/``[x]``) is removed.
2. Each line is cut at ``;``, and at ``:``, ``.`` and ``,`` when whitespace follows them
   (so ``2.0``, ``a.b`` and ``10:30`` stay whole).
3. Leading ``and``, ``or`` and ``then`` (repeatedly, in any case) and trailing ``.``, ``,``,
   ``:`` are stripped; inner whitespace is collapsed.
4. Clauses with fewer than 3 letters or digits are dropped, and repeats (compared without
   case) keep their first occurrence.

Invariants are the "do not ...", "don't ..." and "preserve ..." phrases: from the marker to
the end of its clause, de-duplicated the same way.
"""

from __future__ import annotations

import re
from typing import Final

from lattice_runtime.compile.task import AcceptanceCriterion

__all__ = ["MIN_CLAUSE_ALNUM", "acceptance_criteria", "extract_invariants", "split_clauses"]

MIN_CLAUSE_ALNUM: Final = 3
"""A clause needs at least this many letters or digits to count."""

_BULLET: Final = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_CUT: Final = re.compile(r";|[:.,](?=\s)")
_CONNECTOR: Final = re.compile(r"^(?:and|or|then)\b[\s,]*", re.IGNORECASE)
_SPACE: Final = re.compile(r"\s+")
_INVARIANT: Final = re.compile(r"\b(?:do\s+not|don['\u2019]t|preserve)\b", re.IGNORECASE)


def _alnum_count(text: str) -> int:
    return sum(1 for char in text if char.isalnum())


def _clean(piece: str) -> str:
    text = _SPACE.sub(" ", piece).strip()
    previous = None
    while previous != text:
        previous = text
        text = _CONNECTOR.sub("", text).strip()
    return text.rstrip(".,:").strip()


def _unique(items: list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        key = item.casefold()
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return tuple(kept)


def split_clauses(text: str) -> tuple[str, ...]:
    """Cut ``text`` into clauses by the module's rules.

    Args:
        text: A goal (any length, any number of lines).

    Returns:
        The clauses in order, trimmed, without bullets or leading connectors, each with at
        least :data:`MIN_CLAUSE_ALNUM` letters or digits, without case-insensitive repeats.
    """
    clauses: list[str] = []
    for line in text.splitlines():
        body = _BULLET.sub("", line, count=1)
        for piece in _CUT.split(body):
            clause = _clean(piece)
            if _alnum_count(clause) >= MIN_CLAUSE_ALNUM:
                clauses.append(clause)
    return _unique(clauses)


def acceptance_criteria(goal: str) -> tuple[AcceptanceCriterion, ...]:
    """The goal's clauses as acceptance criteria ``ac-1``, ``ac-2``, ... in goal order.

    Args:
        goal: The goal as the user wrote it.

    Returns:
        One criterion per clause of :func:`split_clauses`.
    """
    return tuple(
        AcceptanceCriterion(id=f"ac-{number}", text=clause)
        for number, clause in enumerate(split_clauses(goal), start=1)
    )


def extract_invariants(goal: str) -> tuple[str, ...]:
    """The goal's "do not ...", "don't ..." and "preserve ..." phrases.

    Args:
        goal: The goal as the user wrote it.

    Returns:
        Each phrase from its marker to the end of its clause (a clause may hold text before
        the marker: "fix X but do not touch Y" gives "do not touch Y"), in goal order, without
        case-insensitive repeats; a bare marker with nothing after it is dropped.
    """
    phrases: list[str] = []
    for clause in split_clauses(goal):
        match = _INVARIANT.search(clause)
        if match is None:
            continue
        phrase = clause[match.start() :]
        if _alnum_count(phrase[len(match.group(0)) :]) > 0:
            phrases.append(phrase)
    return _unique(phrases)
