"""The exception tree of ``repocontext``.

Every error the package raises derives from :class:`RepoContextError` and carries a stable
``code`` (dotted, lower case), a human ``message`` and a ``hint`` that tells the caller what to
do next. The MCP, HTTP and CLI edges translate these into tool errors, JSON bodies and exit
codes; nothing below them ever returns an error value instead of raising.

::

    RepoContextError                      repocontext.error
    ├── InvalidInputError                 input.invalid
    │   └── WrongFamilyError              memory.wrong_family
    ├── BudgetTooSmallError               context.budget_too_small
    ├── VectorsUnavailableError           search.vectors_unavailable
    ├── EmbeddingStoppedError             embed.stopped
    ├── UnsupportedLanguageError          index.unsupported_language
    ├── IndexRunningError                 index.running
    ├── NotFoundError                     repo.not_found
    │   └── MemoryNotFoundError           memory.not_found
    ├── RepoConflictError                 repo.conflict
    ├── ClaimError                        claim.error
    │   ├── ClaimRequiredError            claim.required
    │   ├── StaleTokenError               claim.stale_token
    │   ├── UnissuedTokenError            claim.unissued_token
    │   └── ReleasedTokenError            claim.released
    ├── PortInUseError                    server.port_in_use
    ├── WorkersFailedError                server.workers_failed
    ├── PathError                         path.error
    │   ├── PathOutsideWorkspaceError     path.outside_workspace
    │   ├── DangerousRootError            path.dangerous_root
    │   ├── PathNotFoundError             path.not_found
    │   ├── RootChangedError              path.root_changed
    │   └── NoWorkspaceRootError          path.no_workspace_root
    ├── AuthError                         auth.error
    │   ├── UnauthorizedError             auth.unauthorized
    │   ├── AuthConfigError               auth.config_invalid
    │   ├── GrantMissingError             auth.no_grant
    │   ├── RepoForbiddenError            auth.repo_forbidden
    │   └── ToolForbiddenError            auth.tool_forbidden
    └── StoreError                        store.error
        ├── InvalidKeyError               store.invalid_key
        ├── UnknownTreeError              store.unknown_tree
        ├── MergeModeError                store.merge_mode
        ├── ValueTooLargeError            store.value_too_large
        ├── InvalidUpdateError            store.invalid_update
        ├── InvalidTokenError             store.invalid_continuation
        ├── StoreReadOnlyError            store.read_only
        ├── StoreFullError                store.full
        ├── FeedTrimmedError              store.feed_trimmed
        ├── StoreUnavailableError         store.unavailable
        ├── StoreNotFoundError            store.not_found
        ├── ArchiveCorruptError           archive.corrupt
        └── ArchiveEmptyRefusedError      archive.empty_refused
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "ArchiveCorruptError",
    "ArchiveEmptyRefusedError",
    "AuthConfigError",
    "AuthError",
    "BudgetTooSmallError",
    "ClaimError",
    "ClaimRequiredError",
    "DangerousRootError",
    "EmbeddingStoppedError",
    "FeedTrimmedError",
    "GrantMissingError",
    "IndexRunningError",
    "InvalidInputError",
    "InvalidKeyError",
    "InvalidTokenError",
    "InvalidUpdateError",
    "MemoryNotFoundError",
    "MergeModeError",
    "NoWorkspaceRootError",
    "NotFoundError",
    "PathError",
    "PathNotFoundError",
    "PathOutsideWorkspaceError",
    "PortInUseError",
    "ReleasedTokenError",
    "RepoConflictError",
    "RepoContextError",
    "RepoForbiddenError",
    "RootChangedError",
    "StaleTokenError",
    "StoreError",
    "StoreFullError",
    "StoreNotFoundError",
    "StoreReadOnlyError",
    "StoreUnavailableError",
    "ToolForbiddenError",
    "UnauthorizedError",
    "UnissuedTokenError",
    "UnknownTreeError",
    "UnsupportedLanguageError",
    "ValueTooLargeError",
    "VectorsUnavailableError",
    "WorkersFailedError",
    "WrongFamilyError",
]


class RepoContextError(Exception):
    """Root of every error raised by ``repocontext``.

    Attributes:
        code: Stable, dotted identifier of the failure (part of the wire contract).
        message: What went wrong, in one sentence.
        hint: What the caller can do next.
    """

    code: ClassVar[str] = "repocontext.error"
    default_hint: ClassVar[str] = "Check the request and try again."

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def to_dict(self) -> dict[str, str]:
        """Return the wire form ``{code, message, hint}``."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


class InvalidInputError(RepoContextError):
    """A parameter is malformed or out of range."""

    code = "input.invalid"


class BudgetTooSmallError(RepoContextError):
    """A response budget below the smallest possible answer (a budget is a hard ceiling).

    Attributes:
        budget: The budget asked for.
        smallest: The smallest budget that is answered.
    """

    code = "context.budget_too_small"

    def __init__(self, budget: int, smallest: int) -> None:
        super().__init__(
            f"a response of at most {budget} tokens cannot be sent: the smallest answer "
            f"costs {smallest}",
            hint=f"Call again with responseBudgetTokens of at least {smallest} "
            "(a budget that fits entries is larger: see retryBudgetTokens in that answer).",
        )
        self.budget = budget
        self.smallest = smallest


class VectorsUnavailableError(RepoContextError):
    """A search asked for a semantic or hybrid answer that no vectors can give now.

    No embedder is configured, the repository's vectors were made by another embedder, or
    they are not built yet; the hint says which to do. (A search that asks for no mode falls
    back to keyword-only instead, and says so in its ``retrievalPath``.)
    """

    code = "search.vectors_unavailable"


class EmbeddingStoppedError(RepoContextError):
    """An embedding pass was stopped before it ended.

    The workspace closed, or the repository was removed or reset, meanwhile. The pass wrote
    nothing more: the vectors are as they were.
    """

    code = "embed.stopped"
    default_hint = (
        "If the repository is still registered and the workspace open, run the pass again."
    )


class UnsupportedLanguageError(RepoContextError):
    """The indexer has no grammar for a language id.

    Attributes:
        language: The language id that was asked for.
    """

    code = "index.unsupported_language"
    default_hint = "Use a language from repocontext.index.parsing.languages.LANGUAGES."

    def __init__(self, language: str, *, hint: str | None = None) -> None:
        super().__init__(f"No outline grammar for language {language!r}.", hint=hint)
        self.language = language


class IndexRunningError(RepoContextError):
    """An index run of the repository is in progress, so its records cannot be dropped now."""

    code = "index.running"
    default_hint = (
        "Wait until repocontext_index_status reports completed or failed, then call again."
    )


class NotFoundError(RepoContextError):
    """A named repository or record does not exist."""

    code = "repo.not_found"
    default_hint = "List what exists first (repocontext_list_repos, repocontext_scan)."


class RepoConflictError(RepoContextError):
    """A repository id is already registered for another root."""

    code = "repo.conflict"
    default_hint = "Pick another repoId, or remove the registered repository first."


class MemoryNotFoundError(NotFoundError):
    """No live memory entry has the key."""

    code = "memory.not_found"
    default_hint = "Check the key with repocontext_recall or repocontext_scan (scope memory)."


class WrongFamilyError(InvalidInputError):
    """A memory operation was given the key of another kind of record."""

    code = "memory.wrong_family"
    default_hint = "Pass a memory key: repo/{repoId}/mem/{topic}/{id}."


class ClaimError(RepoContextError):
    """Root of the fence-on-write refusals (docs/claims.md, "Fence on write")."""

    code = "claim.error"


class ClaimRequiredError(ClaimError):
    """A write to an entry under a live claim came without a fencing token."""

    code = "claim.required"
    default_hint = "Pass the fencingToken of your claim, or wait for the claim to end."


class StaleTokenError(ClaimError):
    """A write carried a token older than the newest one issued (the claim moved on)."""

    code = "claim.stale_token"
    default_hint = "Your claim was superseded: stop working on this entry and claim again."


class UnissuedTokenError(ClaimError):
    """A write carried a token that was never issued for the entry."""

    code = "claim.unissued_token"
    default_hint = "Use the fencingToken that repocontext_claim returned for this entry."


class ReleasedTokenError(ClaimError):
    """A write carried the token of a claim that was released."""

    code = "claim.released"
    default_hint = "The claim was released; claim the entry again before writing."


class PortInUseError(RepoContextError):
    """The HTTP server cannot listen on its address (another process holds the port)."""

    code = "server.port_in_use"


class WorkersFailedError(RepoContextError):
    """``serve --workers N``: a worker process did not start, or kept dying."""

    code = "server.workers_failed"


class PathError(RepoContextError):
    """Root of the workspace path guard's refusals."""

    code = "path.error"


class PathOutsideWorkspaceError(PathError):
    """A path resolves (symlinks followed) outside the workspace root."""

    code = "path.outside_workspace"
    default_hint = (
        "Pass a directory inside the workspace root, or start the server with a "
        "--workspace-root that contains it."
    )


class DangerousRootError(PathError):
    """A path is the filesystem root or the user's home directory."""

    code = "path.dangerous_root"
    default_hint = "Register the repository directory itself, not / or your home directory."


class PathNotFoundError(PathError):
    """A path does not exist or is not a directory."""

    code = "path.not_found"
    default_hint = "Check the path; it must be an existing directory."


class RootChangedError(PathError):
    """A registered repository root no longer resolves to itself (a symlink replaced it)."""

    code = "path.root_changed"
    default_hint = (
        "Restore the directory, or remove the repository (repocontext_remove_repo) and "
        "register the directory it should index."
    )


class NoWorkspaceRootError(PathError):
    """A path was passed but the server has no workspace root to check it against."""

    code = "path.no_workspace_root"
    default_hint = "Start the server with --workspace-root (or --repo) to accept repository paths."


class AuthError(RepoContextError):
    """Root of the authentication and grant failures."""

    code = "auth.error"


class UnauthorizedError(AuthError):
    """A server needs a bearer token the caller did not send (or sent a wrong one)."""

    code = "auth.unauthorized"
    default_hint = "Send 'Authorization: Bearer <token>' with a token of the server's tokens file."


class AuthConfigError(AuthError):
    """The auth tokens file (or the local grant) is missing or malformed."""

    code = "auth.config_invalid"
    default_hint = (
        'Write {"tokens": [{"token": "...", "role": "reader"|"curator", "repos": ["*"]}]} '
        "(see docs/deployment.md)."
    )


class GrantMissingError(AuthError):
    """A tool was reached without an established grant (grants fail closed: none is assumed)."""

    code = "auth.no_grant"
    default_hint = (
        "Serve tools through repocontext.mcp.build_server (it runs every call under its grant), "
        "or wrap the call in repocontext.auth.granted(...) with the grant it may use."
    )


class RepoForbiddenError(AuthError):
    """The caller's grant does not cover the repository asked about."""

    code = "auth.repo_forbidden"
    default_hint = "Call repocontext_list_repos to see the repositories this token may use."


class ToolForbiddenError(AuthError):
    """The caller's grant does not include the tool called."""

    code = "auth.tool_forbidden"
    default_hint = "Call only the tools tools/list shows; writes need a curator token."


class StoreError(RepoContextError):
    """Root of the store's failures."""

    code = "store.error"


class InvalidKeyError(StoreError):
    """A key does not follow the key grammar or is too long."""

    code = "store.invalid_key"
    default_hint = (
        "Keys look like repo/{repoId}/file/{path} or repo/{repoId}/mem/{topic}/{id}; "
        "components are non-empty, free of NUL, '.' and '..', and the key fits in 480 bytes."
    )


class UnknownTreeError(StoreError):
    """A tree name is not one of the store's named trees."""

    code = "store.unknown_tree"
    default_hint = "Use one of the names in repocontext.store.TREES."


class MergeModeError(StoreError):
    """An operation does not fit the merge mode the tree declares."""

    code = "store.merge_mode"
    default_hint = (
        "Use put() for LWW trees, merge_fields() for document trees, set_flag() for flags."
    )


class ValueTooLargeError(StoreError):
    """An encoded record exceeds the configured value limit."""

    code = "store.value_too_large"
    default_hint = "Store large bodies in smaller records or raise the store's max_value_bytes."


class InvalidUpdateError(StoreError):
    """A foreign CRDT update could not be decoded."""

    code = "store.invalid_update"
    default_hint = "Send bytes produced by Store.export_update() of a compatible store."


class InvalidTokenError(StoreError):
    """A continuation token is malformed or belongs to another scan."""

    code = "store.invalid_continuation"
    default_hint = "Pass back the continuationToken of the previous page unchanged, or start over."


class StoreReadOnlyError(StoreError):
    """The data directory or the store cannot be written."""

    code = "store.read_only"
    default_hint = "Point --data-dir at a directory this user can write."


class StoreFullError(StoreError):
    """The disk or the configured map limit has no room left."""

    code = "store.full"
    default_hint = "Free disk space or raise the store's max_map_bytes; nothing stored was lost."


class FeedTrimmedError(StoreError):
    """Change-feed events a consumer asked for were trimmed (older than the feed's floor)."""

    code = "store.feed_trimmed"
    default_hint = (
        "Rebuild what you derive from the records themselves, then follow the feed from "
        "Store.last_seq()."
    )


class StoreUnavailableError(StoreError):
    """The store could not be opened or has been closed."""

    code = "store.unavailable"
    default_hint = "Check the data directory and that the store is open."


class StoreNotFoundError(StoreError):
    """A command that reads an existing store found none in the data directory."""

    code = "store.not_found"
    default_hint = (
        "Pass the --data-dir (or REPOCONTEXT_DATA_DIR) the store was made with, or index a "
        "repository first: repocontext index PATH."
    )


class ArchiveCorruptError(StoreError):
    """An archive file failed its format or checksum checks."""

    code = "archive.corrupt"
    default_hint = "Restore from the previous snapshot (the .prev file beside the archive)."


class ArchiveEmptyRefusedError(StoreError):
    """An export of zero records would replace a non-empty archive."""

    code = "archive.empty_refused"
    default_hint = (
        "Nothing was written; check that the store holds the records you meant to export."
    )
