"""Identifier-aware terms: how code text, paths and queries become search terms.

``parseHTTPResponse2`` -> ``parse``, ``http``, ``response``, ``2`` and the whole identifier
``parsehttpresponse2``; ``user_id`` -> ``user``, ``id``, ``user_id``. Text is split on every
non-alphanumeric character (``_`` joins the parts of a snake_case identifier, which is also kept
whole), then on camelCase humps (an acronym ends before its last capital when a lowercase
letter follows) and on letter/digit transitions; every term is lowercased. Terms shorter than
two characters are dropped, except digits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

__all__ = ["MAX_TERM", "split_identifier", "terms", "unique_terms"]

MAX_TERM: Final = 64
_WORD: Final = re.compile(r"[A-Za-z0-9_]+")
_PART: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifier(word: str) -> list[str]:
    """Return the lowercased parts of one identifier (``getHTTPServer`` -> get, http, server)."""
    return [part.lower() for part in _PART.findall(word)]


def terms(text: str) -> Iterator[str]:
    """Yield the terms of ``text`` in order (with repeats, for term frequencies)."""
    for match in _WORD.finditer(text):
        word = match.group()
        if len(word) > MAX_TERM:
            continue
        parts = split_identifier(word)
        for part in parts:
            if len(part) > 1 or part.isdigit():
                yield part
        whole = word.lower().strip("_")
        if len(parts) > 1 and len(whole) > 1:
            yield whole


def unique_terms(text: str) -> list[str]:
    """Return the distinct terms of ``text`` in first-seen order."""
    return list(dict.fromkeys(terms(text)))
