"""The standard baseline: Okapi BM25 (k1 1.2, b 0.75) over path + content, code tokenizer.

Every file of the language is a document: its path and its text. The tokenizer splits on
non-alphanumerics, then splits snake_case and camelCase identifiers into their parts, keeps the
whole identifier as well, lowercases, and drops 1-character tokens. IDF is the non-negative
``log(1 + (N - df + 0.5) / (df + 0.5))``; each distinct query term counts once. This is the
baseline a reviewer would pick for code retrieval (issue 23), independent of our own index.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Final

__all__ = ["BM25", "code_tokens"]

K1: Final = 1.2
B: Final = 0.75
_WORD: Final = re.compile(r"[A-Za-z0-9_]+")
_HUMP: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def code_tokens(text: str) -> Iterator[str]:
    """The tokens of ``text``: identifier parts and whole identifiers, lowercased, len >= 2."""
    for word in _WORD.findall(text):
        parts = [p.lower() for piece in word.split("_") for p in _HUMP.findall(piece)]
        for part in parts:
            if len(part) > 1:
                yield part
        whole = word.lower().strip("_")
        if len(parts) > 1 and len(whole) > 1:
            yield whole


class BM25:
    """Okapi BM25 over a fixed set of documents (path -> text)."""

    def __init__(self, docs: Mapping[str, str]) -> None:
        """Index ``docs``: each document is its path and its text."""
        self._postings: dict[str, list[tuple[str, int]]] = {}
        self._length: dict[str, int] = {}
        for path, text in docs.items():
            counts = Counter(code_tokens(path + "\n" + text))
            self._length[path] = sum(counts.values())
            for term, tf in counts.items():
                self._postings.setdefault(term, []).append((path, tf))
        self._avg = sum(self._length.values()) / max(len(self._length), 1)

    def rank(self, query: str) -> list[str]:
        """Every document that shares a term with ``query``, best first (ties by path)."""
        n = len(self._length)
        scores: Counter[str] = Counter()
        for term in dict.fromkeys(code_tokens(query)):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for path, tf in postings:
                norm = tf + K1 * (1 - B + B * self._length[path] / self._avg)
                scores[path] += idf * tf * (K1 + 1) / norm
        return sorted(scores, key=lambda p: (-scores[p], p))
