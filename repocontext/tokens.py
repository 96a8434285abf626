"""The one exact token counter every component shares (BPE, o200k by default).

Counts come from ``quicktok`` (byte-identical to tiktoken), which ships its vocabularies in
the wheel, so counting never touches the network. ``count_tokens`` caches one encoder per
encoding name per process; encoders are thread-safe.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, Protocol

import quicktok

from repocontext.errors import InvalidInputError

__all__ = ["DEFAULT_ENCODING", "ENCODINGS", "BpeCounter", "TokenCounter", "count_tokens"]

DEFAULT_ENCODING: Final = "o200k_base"
ENCODINGS: Final = ("o200k_base", "cl100k_base")


class TokenCounter(Protocol):
    """Counts the tokens of a text."""

    encoding: str

    def count(self, text: str) -> int:
        """Return the exact number of tokens of ``text``."""
        ...


class BpeCounter:
    """An exact BPE counter for one of :data:`ENCODINGS`."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        """Load the encoding (bundled; no download).

        Raises:
            InvalidInputError: ``encoding`` is not one of :data:`ENCODINGS`.
        """
        if encoding not in ENCODINGS:
            raise InvalidInputError(
                f"unknown tokenizer {encoding!r}", hint=f"Use one of {', '.join(ENCODINGS)}."
            )
        self.encoding = encoding
        self._encoder = _encoder(encoding)

    def count(self, text: str) -> int:
        """Return the exact number of tokens of ``text`` (special tokens count as text)."""
        return int(self._encoder.count(text))


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Count with the process-wide encoder of ``encoding``."""
    return int(_encoder(encoding).count(text))


@lru_cache(maxsize=4)
def _encoder(encoding: str) -> quicktok.Tokenizer:
    return quicktok.get_encoding(encoding)
