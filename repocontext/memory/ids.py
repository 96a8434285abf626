"""Entry ids that sort by creation: 48 bits of milliseconds and 80 random bits, base32.

The 26-character form is ULID's (Crockford base32, no padding), so ids made by different
processes and replicas never collide in practice and sort in the order they were made; ids
made in the same millisecond by one process keep their order too (the random part is
incremented instead of drawn again).
"""

from __future__ import annotations

import os
import threading
from typing import Final

__all__ = ["new_id"]

_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS: Final = 80

_lock = threading.Lock()
_last: list[int] = [0, 0]  # millisecond, random part of the last id made in this process


def new_id(now_seconds: float) -> str:
    """Return a new id for a record created at ``now_seconds`` (epoch seconds)."""
    millis = max(int(now_seconds * 1000), 0)
    with _lock:
        if millis <= _last[0]:
            millis, entropy = _last[0], _last[1] + 1  # same (or earlier) millisecond: keep order
        else:
            entropy = int.from_bytes(os.urandom(10), "big")
        _last[0], _last[1] = millis, entropy
    value = (millis << _RANDOM_BITS) | (entropy & ((1 << _RANDOM_BITS) - 1))
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))
