"""A goal's terms, and when a path or a symbol name matches them.

A goal is read as words and identifiers (``reset_token``, ``TokenStore``, ``auth.py``). Its
*terms* are their lowercased parts (snake_case and camelCase split), at least three
characters long, without English function words and generic task words (``fix``, ``add``,
``test``, ``file``...) that would match every file. Its *identifiers* are the words as written,
lowercased, with the same filter.

Two words match when they are equal, or when one is a prefix of the other and the shorter has
at least four characters (``token``/``tokens``, ``consume``/``consumed``): a light stemming
that needs no language model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["GoalTerms", "name_parts", "words_match"]

MIN_TERM: Final = 3
_STEM_MIN: Final = 4
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOPWORDS: Final = frozenset(
    str.split(
        "about after all also and any are because been before but can cannot could does done "
        "each every for from has have how into its make makes may might more must new not "
        "now off once only other our should some still such than that the their them then "
        "there these they this those too use used uses using was were what when where which "
        "while who why will with within without would you your "
        "add adds added bug change changes changed code correct correctly ensure ensures file "
        "files fix fixes fixed function functions instead issue issues keep keeps method "
        "methods module properly test tests update updates updated work works"
    )
)


def name_parts(name: str) -> list[str]:
    """The lowercased parts of an identifier or path segment (``getHTTPServer``: get, http...)."""
    return [part.lower() for part in _PART.findall(name)]


def words_match(term: str, word: str) -> bool:
    """Whether two lowercased words match (equal, or a prefix of at least four characters)."""
    if term == word:
        return True
    if min(len(term), len(word)) < _STEM_MIN:
        return False
    return word.startswith(term) or term.startswith(word)


def _kept(word: str) -> bool:
    return len(word) >= MIN_TERM and word not in _STOPWORDS


@dataclass(frozen=True, slots=True)
class GoalTerms:
    """The terms and identifiers of a goal.

    Attributes:
        terms: Lowercased parts of every word, filtered (module docstring).
        identifiers: The words as written, lowercased, filtered.
    """

    terms: frozenset[str]
    identifiers: frozenset[str]

    @classmethod
    def of(cls, goal: str) -> GoalTerms:
        """Read a goal's terms and identifiers."""
        words = _WORD.findall(goal)
        identifiers = {word.lower().strip("_") for word in words}
        parts = {part for word in words for part in name_parts(word)}
        return cls(
            terms=frozenset(filter(_kept, parts)),
            identifiers=frozenset(filter(_kept, identifiers)),
        )

    def matching(self, words: Iterable[str]) -> tuple[str, ...]:
        """The goal terms that match one of ``words`` (lowercased), sorted."""
        listed = list(words)
        return tuple(sorted(t for t in self.terms if any(words_match(t, w) for w in listed)))

    def path_terms(self, path: str) -> tuple[str, ...]:
        """The goal terms that appear in ``path`` (as a part of one of its segments)."""
        return self.matching(name_parts(path))

    def symbol_strength(self, name: str) -> int:
        """How strongly a symbol name matches the goal: 0 (not at all) to 3.

        3: the goal names it exactly; 2: a goal identifier contains it (four characters or
        more); 1: every part of the name that is not a filter word matches a goal term.
        Dunder names and names shorter than three characters never match.
        """
        low = name.lower()
        if len(low) < MIN_TERM or (low.startswith("__") and low.endswith("__")):
            return 0
        bare = low.strip("_")
        if bare in self.identifiers:
            return 3
        if len(bare) >= _STEM_MIN and any(bare in ident for ident in self.identifiers):
            return 2
        parts = [p for p in name_parts(name) if _kept(p)]
        if parts and all(any(words_match(t, p) for t in self.terms) for p in parts):
            return 1
        return 0
