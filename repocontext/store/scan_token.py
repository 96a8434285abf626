"""The continuation token of a paged scan: where the next page of one scan starts.

A token names the tree and a checksum of the prefix it was made for, so a token handed to
another scan is refused rather than silently resuming somewhere else.
"""

from __future__ import annotations

import base64
import zlib

import msgpack

from repocontext.errors import InvalidTokenError
from repocontext.store.trees import TreeSpec

__all__ = ["resume_after", "scan_token"]


def scan_token(spec: TreeSpec, prefix: str, last: bytes) -> str:
    """The token of a scan of ``prefix`` in ``spec``'s tree whose last key was ``last``."""
    payload = msgpack.packb([spec.tag, zlib.crc32(prefix.encode()), last], use_bin_type=True)
    return base64.urlsafe_b64encode(payload).decode()


def resume_after(spec: TreeSpec, prefix: str, token: str | None) -> bytes:
    """The key a scan of ``prefix`` starts at: the prefix, or just after the token's last key.

    Raises:
        InvalidTokenError: The token is malformed or belongs to another scan.
    """
    if token is None:
        return prefix.encode()
    try:
        tag, crc, last = msgpack.unpackb(base64.urlsafe_b64decode(token.encode()), raw=False)
    except Exception as exc:
        raise InvalidTokenError("the continuation token is malformed") from exc
    if tag != spec.tag or crc != zlib.crc32(prefix.encode()) or not isinstance(last, bytes):
        raise InvalidTokenError("the continuation token belongs to another scan")
    return last + b"\x00"
