r"""Typed links of memory entries, and the digests that tell when their targets drifted.

A link is ``(relation, target key)``. Stored in the entry's add-wins set ``links`` as
``relation \x1e key``, so concurrent additions of different links all survive. When a link to
a file or a symbol is added, the target's digest is captured in an LWW field beside it:

* a file (``repo/{id}/file/{path}``): its git blob id;
* a symbol (``repo/{id}/symbol/{fq}``): a hash of each definition's path and source lines, so
  an edit elsewhere in the file (which only moves the lines) does not make the link stale;
* a package or another memory entry: nothing (only whether it exists is checked).

Reading an entry compares the captured digests with the targets now: ``changed`` when they
differ, ``missing`` when the target is gone (or expired).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from repocontext.errors import InvalidInputError, InvalidKeyError
from repocontext.index.files.nodes import file_text, stored_blob_id
from repocontext.index.projections.xref_records import read_symbol_definitions
from repocontext.store import MEMORY, STRUCTURAL, SYMBOL, Store, Value
from repocontext.store.keys import parse_key

__all__ = [
    "LINK_FIELD",
    "LINK_SET",
    "Link",
    "StaleLink",
    "capture",
    "check_links",
    "decode_link",
    "encode_link",
    "exists",
    "parse_links",
]

LINK_SET: Final = "links"
LINK_FIELD: Final = "linkDigest:"
"""Prefix of the field holding a link's captured digest (``linkDigest:{relation} {key}``)."""
_SEP: Final = "\x1e"
_RELATION: Final = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
_TREES: Final = {"file": STRUCTURAL, "pkg": STRUCTURAL, "symbol": SYMBOL, "mem": MEMORY}
MAX_LINKS_PER_CALL: Final = 64


@dataclass(frozen=True, slots=True)
class Link:
    """One typed link of a memory entry."""

    relation: str
    key: str

    @property
    def element(self) -> str:
        """The element of the ``links`` set."""
        return encode_link(self.relation, self.key)

    @property
    def digest_field(self) -> str:
        """The name of the field holding the captured digest."""
        return f"{LINK_FIELD}{self.relation} {self.key}"


@dataclass(frozen=True, slots=True)
class StaleLink:
    """A link whose target drifted since it was linked (``changed``) or is gone (``missing``)."""

    relation: str
    key: str
    reason: Literal["changed", "missing"]


def encode_link(relation: str, key: str) -> str:
    """Return the set element of a link."""
    return f"{relation}{_SEP}{key}"


def decode_link(element: str) -> Link | None:
    """Invert :func:`encode_link` (``None`` for an element that is not a link)."""
    relation, sep, key = element.partition(_SEP)
    return Link(relation, key) if sep and relation and key else None


def parse_links(links: Mapping[str, Iterable[str]] | None, repo_id: str) -> list[Link]:
    """Validate ``{relation: [keys]}`` from a caller.

    Raises:
        InvalidInputError: A relation is malformed, a key breaks the grammar, names another
            repository or a family that cannot be linked, or there are too many links.
    """
    found: list[Link] = []
    for relation, keys in (links or {}).items():
        if not isinstance(relation, str) or not _RELATION.match(relation):
            raise InvalidInputError(
                f"link relation {relation!r} is invalid",
                hint="Relations are words like anchoredTo, related, partOf (letters, digits, _ -).",
            )
        if isinstance(keys, str):
            keys = [keys]
        found.extend(Link(relation, _link_target(key, repo_id)) for key in keys)
    if len(found) > MAX_LINKS_PER_CALL:
        raise InvalidInputError(
            f"{len(found)} links in one call; at most {MAX_LINKS_PER_CALL}",
            hint="Add the links in several updates.",
        )
    return sorted(set(found), key=lambda link: (link.relation, link.key))


def _link_target(key: object, repo_id: str) -> str:
    if not isinstance(key, str):
        raise InvalidInputError("link targets must be record keys (strings)")
    try:
        parsed = parse_key(key)
    except InvalidKeyError as exc:
        raise InvalidInputError(
            f"link target {key[:80]!r} is not a record key: {exc.message}",
            hint="Link to keys like repo/{repoId}/file/{path} or repo/{repoId}/mem/{topic}/{id}.",
        ) from exc
    if parsed.family not in _TREES:
        raise InvalidInputError(
            f"cannot link to a {parsed.family!r} record",
            hint="Link to file, pkg, symbol or mem keys.",
        )
    if parsed.repo_id != repo_id:
        raise InvalidInputError(
            f"link target {key[:80]!r} belongs to repository {parsed.repo_id!r}",
            hint=f"Link within repository {repo_id!r}.",
        )
    return key


def capture(store: Store, key: str) -> str | None:
    """Return the current digest of a link target (``None``: nothing to capture, or gone)."""
    parsed = parse_key(key)
    if parsed.family == "file":
        blob = stored_blob_id(store, parsed.repo_id, str(parsed.path))
        if blob is not None or store.get(STRUCTURAL, key) is None:
            return blob
        return "None"  # (a node without a blob id: what links captured before held)
    if parsed.family == "symbol":
        return _symbol_digest(store, key)
    return None


def exists(store: Store, key: str) -> bool:
    """Return True when a link target is live."""
    return store.get(_TREES[parse_key(key).family], key) is not None


def check_links(
    store: Store, links: Iterable[Link], fields: Mapping[str, Value]
) -> list[StaleLink]:
    """Return the links whose target drifted or is missing, in the order given."""
    stale: list[StaleLink] = []
    for link in links:
        if not exists(store, link.key):
            stale.append(StaleLink(link.relation, link.key, "missing"))
            continue
        captured = fields.get(link.digest_field)
        now = capture(store, link.key) if captured is not None else None
        if captured is not None and now != captured:
            stale.append(StaleLink(link.relation, link.key, "changed"))
    return stale


def _symbol_digest(store: Store, key: str) -> str | None:
    definitions = read_symbol_definitions(store, key)
    if definitions is None:
        return None
    repo_id = parse_key(key).repo_id
    digest = hashlib.sha256()
    texts: dict[str, list[str]] = {}
    for definition in definitions:
        path, start, end = definition.path, definition.start_line, definition.end_line
        if path not in texts:
            texts[path] = (file_text(store, repo_id, path) or "").splitlines()
        digest.update(path.encode() + b"\0")
        digest.update("\n".join(texts[path][start - 1 : end]).encode() + b"\0")
    return digest.hexdigest()[:32]
