"""Grants: who may see which repositories and use which tools.

A :class:`Grant` is a role (``reader`` sees the read tools; ``curator`` also the write tools,
when the server enables writes) and the repositories it may touch (``*`` for all). HTTP callers
present a bearer token that a :class:`TokenBook` maps to a grant; stdio callers (and HTTP
callers of a server without a tokens file) get the configured local grant.

The tokens file is JSON::

    {"tokens": [{"token": "s3cret", "role": "reader", "repos": ["api", "web"]},
                {"token": "sha256:9f86d0…", "role": "curator", "repos": ["*"], "name": "ci"}]}

A ``sha256:<hex>`` token is the digest of the real token, so the file can hold no secrets.
Tokens are compared by digest; the token itself is never logged (a grant's ``name`` is, and
defaults to the first 8 hex digits of the digest).

The grant of the call being served is kept in a context variable (:func:`current_grant`), so
the tools that list across repositories (``list_repos``, ``neighbors``…) can filter by it.
It has no default: code that reads it where no grant was established (:func:`granted`) gets
:class:`~repocontext.errors.GrantMissingError` (``auth.no_grant``) instead of full access, so a
path that forgets to set it fails closed. The servers establish theirs explicitly (each MCP
server runs every call under its own grant); a library caller that wants unrestricted access
says so with ``granted(FULL_ACCESS)``.

A tokens file's plaintext token shorter than :data:`MIN_TOKEN_CHARS` is accepted with a
warning that names its grant (never the token).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from repocontext.errors import AuthConfigError, GrantMissingError, RepoForbiddenError
from repocontext.store.keys import parse_key

__all__ = [
    "FULL_ACCESS",
    "MIN_TOKEN_CHARS",
    "Grant",
    "Role",
    "TokenBook",
    "check_key",
    "check_repo",
    "current_grant",
    "granted",
    "token_digest",
    "visible",
]

Role = Literal["reader", "curator"]
ROLES: Final = ("reader", "curator")
_DIGEST_PREFIX: Final = "sha256:"
_HEX: Final = frozenset("0123456789abcdef")
MIN_TOKEN_CHARS: Final = 32
"""Plaintext tokens shorter than this are loaded with a warning (they are guessable)."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Grant:
    """What a caller may do.

    Attributes:
        name: A label for logs and metrics (never the token).
        role: ``reader`` (read tools only) or ``curator`` (read and write tools).
        repos: Repository ids it may touch; ``None`` means every repository.
    """

    name: str
    role: Role
    repos: frozenset[str] | None = None

    @property
    def can_write(self) -> bool:
        """True when the grant may call write tools (if the server offers them)."""
        return self.role == "curator"

    def allows(self, repo_id: str) -> bool:
        """Return True when the grant covers ``repo_id``."""
        return self.repos is None or repo_id in self.repos

    @classmethod
    def of(cls, name: str, role: str, repos: tuple[str, ...] | list[str]) -> Grant:
        """Build a grant from settings or a tokens-file entry (``*`` among repos: all).

        Raises:
            AuthConfigError: The role is unknown or the repository list is empty or malformed.
        """
        if role not in ROLES:
            raise AuthConfigError(f"grant {name!r}: unknown role {role!r} (reader or curator)")
        if not repos or not all(isinstance(r, str) and r for r in repos):
            raise AuthConfigError(
                f"grant {name!r}: repos must be a non-empty list of repository ids or ['*']"
            )
        checked: Role = "reader" if role == "reader" else "curator"
        return cls(name=name, role=checked, repos=None if "*" in repos else frozenset(repos))


FULL_ACCESS: Final = Grant(name="local", role="curator")
"""Every repository and tool: what a library caller passes to :func:`granted` to say so."""

_current: ContextVar[Grant] = ContextVar("repocontext_grant")  # no default: fail closed


def current_grant() -> Grant:
    """Return the grant of the call being served.

    Raises:
        GrantMissingError: No grant was established (:func:`granted`) in this context.
    """
    try:
        return _current.get()
    except LookupError:
        raise GrantMissingError("no grant is established for this call") from None


@contextmanager
def granted(grant: Grant) -> Iterator[None]:
    """Make ``grant`` the current grant inside the block."""
    token = _current.set(grant)
    try:
        yield
    finally:
        _current.reset(token)


def check_repo(repo_id: str, grant: Grant | None = None) -> None:
    """Refuse a repository the grant (default: the current one) does not cover.

    Raises:
        RepoForbiddenError: The grant does not cover ``repo_id``.
        GrantMissingError: No grant is given and none is established.
    """
    grant = grant or current_grant()
    if not grant.allows(repo_id):
        raise RepoForbiddenError(f"this token has no grant for repository {repo_id!r}")


def check_key(key: str, grant: Grant | None = None) -> None:
    """Refuse a key whose repository the grant does not cover (malformed keys pass through).

    A malformed key is left to the tool, which reports it with its own error code.

    Raises:
        RepoForbiddenError: The key's repository is outside the grant.
        GrantMissingError: No grant is given and none is established.
    """
    grant = grant or current_grant()
    if grant.repos is None:
        return
    try:
        repo_id = parse_key(key).repo_id
    except Exception:  # the tool itself reports the malformed key
        return
    check_repo(repo_id, grant)


def visible(key: str, grant: Grant | None = None) -> bool:
    """Return True when the grant (default: the current one) covers the key's repository.

    Raises:
        GrantMissingError: No grant is given and none is established (never False: a missing
            grant is an error, not an empty view).
    """
    try:
        check_key(key, grant)
    except RepoForbiddenError:
        return False
    return True


def token_digest(token: str) -> str:
    """Return the hex SHA-256 digest of a bearer token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenBook:
    """Bearer tokens (by digest) and the grants they carry."""

    def __init__(self, grants_by_digest: Mapping[str, Grant]) -> None:
        """Wrap a digest -> grant mapping (use :meth:`load`)."""
        self._by_digest = dict(grants_by_digest)

    @classmethod
    def load(cls, path: Path) -> TokenBook:
        """Read a tokens file (see the module docstring).

        Raises:
            AuthConfigError: The file is missing, unreadable, not JSON or malformed.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise AuthConfigError(f"cannot read the auth tokens file {path}: {exc}") from exc
        except ValueError as exc:
            raise AuthConfigError(f"the auth tokens file {path} is not JSON: {exc}") from exc
        entries = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            raise AuthConfigError(f'{path}: expected {{"tokens": [ ... ]}} with at least one')
        by_digest: dict[str, Grant] = {}
        for index, entry in enumerate(entries):
            digest, grant = _entry(entry, index)
            if digest in by_digest:
                raise AuthConfigError(f"{path}: token #{index + 1} appears twice")
            by_digest[digest] = grant
        return cls(by_digest)

    def lookup(self, token: str) -> Grant | None:
        """Return the grant of a bearer token, or ``None`` for an unknown one."""
        return self._by_digest.get(token_digest(token))

    def grants(self) -> list[Grant]:
        """Return every distinct grant, ordered by name."""
        return sorted(set(self._by_digest.values()), key=lambda g: (g.name, g.role))


def _entry(entry: object, index: int) -> tuple[str, Grant]:
    where = f"token #{index + 1}"
    if not isinstance(entry, dict):
        raise AuthConfigError(f"{where}: expected an object with token, role and repos")
    token = entry.get("token")
    if not isinstance(token, str) or not token:
        raise AuthConfigError(f"{where}: 'token' must be a non-empty string")
    if token.startswith(_DIGEST_PREFIX):
        digest = token[len(_DIGEST_PREFIX) :].lower()
        if len(digest) != 64 or not set(digest) <= _HEX:
            raise AuthConfigError(f"{where}: a sha256: token needs 64 hex digits")
    else:
        digest = token_digest(token)
    name = entry.get("name", digest[:8])
    if not isinstance(name, str) or not name:
        raise AuthConfigError(f"{where}: 'name' must be a non-empty string")
    if not token.startswith(_DIGEST_PREFIX) and len(token) < MIN_TOKEN_CHARS:
        _log.warning(
            "%s (grant %r): the token is shorter than %d characters and easy to guess; "
            "use a long random one, e.g. `openssl rand -hex 32`",
            where,
            name,
            MIN_TOKEN_CHARS,
        )
    repos = entry.get("repos", ["*"])
    if not isinstance(repos, list):
        raise AuthConfigError(f"{where}: 'repos' must be a list")
    return digest, Grant.of(name, str(entry.get("role")), repos)
