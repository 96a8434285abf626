"""The exception tree of ``lattice_runtime``.

Every error derives from :class:`LatticeError` and carries a stable ``code``, a ``message`` and
a ``hint``. Errors that end a stage of a run carry the exact *reason code* the contract names
(``docs/lattice.md``), so a run's record says why in one word.

::

    LatticeError                          lattice.error
    ├── ConfigError                       lattice.config_invalid
    ├── TaskInvalidError                  lattice.task_invalid
    ├── CommandNotAllowedError            lattice.command_not_allowed
    ├── ProtocolError                     lattice.protocol_invalid    (reason, repairable)
    ├── ContextError                      lattice.context
    │   ├── StalePageError                lattice.page_stale
    │   └── BudgetExhaustedError          lattice.budget_exhausted
    ├── LoweringError                     lattice.lowering            (reason)
    ├── TransactionError                  lattice.transaction
    │   └── StaleFileError                lattice.stale_file
    ├── IllegalTransitionError            lattice.illegal_transition
    ├── SessionError                      lattice.session
    │   └── SessionNotFoundError          lattice.session_not_found
    ├── WorkerError                       lattice.worker
    │   └── BudgetRefusedError            lattice.budget_refused
    └── UnsafePathError                   lattice.unsafe_path
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal, get_args

__all__ = [
    "LOWERING_REASONS",
    "BudgetExhaustedError",
    "BudgetRefusedError",
    "CommandNotAllowedError",
    "ConfigError",
    "ContextError",
    "IllegalTransitionError",
    "LatticeError",
    "LoweringError",
    "LoweringReason",
    "ProtocolError",
    "SessionError",
    "SessionNotFoundError",
    "StaleFileError",
    "StalePageError",
    "TaskInvalidError",
    "TransactionError",
    "UnsafePathError",
    "WorkerError",
]

LoweringReason = Literal[
    "task_mismatch",
    "session_mismatch",
    "repository_mismatch",
    "base_commit_mismatch",
    "epoch_mismatch",
    "registry_integrity",
    "invalidated_handle",
    "provider_transaction_field",
    "workspace_required",
    "unsafe_destination",
    "protected_destination",
    "destination_exists",
    "duplicate_path",
    "duplicate_handle",
    "unknown_handle",
    "unsupported_operation",
    "permission_denied",
    "replacement_outside_grant",
    "replacement_source_missing",
    "replacement_source_ambiguous",
    "replacement_conflict",
]
"""Why a proposed patch could not be lowered (the contract's reason codes, exactly)."""

LOWERING_REASONS: Final[tuple[str, ...]] = get_args(LoweringReason)


class LatticeError(Exception):
    """Root of every error raised by ``lattice_runtime``.

    Attributes:
        code: Stable, dotted identifier of the failure.
        message: What went wrong.
        hint: What the caller can do next.
    """

    code: ClassVar[str] = "lattice.error"

    def __init__(self, message: str, *, hint: str = "Check the request and try again.") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class ConfigError(LatticeError):
    """A ``LATTICE_*`` variable or a flag has an invalid value."""

    code: ClassVar[str] = "lattice.config_invalid"


class TaskInvalidError(LatticeError):
    """The goal or task options cannot be compiled (empty goal, bad scope, bad budget)."""

    code: ClassVar[str] = "lattice.task_invalid"


class CommandNotAllowedError(LatticeError):
    """A verification command is not on the task's allowlist; it never runs."""

    code: ClassVar[str] = "lattice.command_not_allowed"


class ProtocolError(LatticeError):
    """A worker response does not follow the wire protocol.

    Attributes:
        reason: Why, one word (``malformed_json``, ``schema``, ``unknown_kind``,
            ``schema_version``, ``duplicate_handle``, ``duplicate_create_path``, ...).
        repairable: One protocol-repair turn may fix it (malformed JSON, schema errors).
    """

    code: ClassVar[str] = "lattice.protocol_invalid"

    def __init__(self, message: str, *, reason: str, repairable: bool, hint: str = "") -> None:
        super().__init__(message, hint=hint or "Answer with exactly one JSON object as shown.")
        self.reason = reason
        self.repairable = repairable


class ContextError(LatticeError):
    """A page or context request cannot be served."""

    code: ClassVar[str] = "lattice.context"


class StalePageError(ContextError):
    """The file behind a page changed since the page was granted; it is not served."""

    code: ClassVar[str] = "lattice.page_stale"


class BudgetExhaustedError(ContextError):
    """The task's context budget (tokens, pages or faults) is spent."""

    code: ClassVar[str] = "lattice.budget_exhausted"


class LoweringError(LatticeError):
    """A proposed patch cannot be lowered to the patch IR.

    Attributes:
        reason: One of :data:`LOWERING_REASONS`.
    """

    code: ClassVar[str] = "lattice.lowering"

    def __init__(self, reason: LoweringReason, message: str, *, hint: str = "") -> None:
        super().__init__(message, hint=hint or "Revise the patch within the granted handles.")
        self.reason: LoweringReason = reason


class TransactionError(LatticeError):
    """The worktree transaction could not be set up, applied or cleaned up."""

    code: ClassVar[str] = "lattice.transaction"


class StaleFileError(TransactionError):
    """A file changed after its grant; the patch is refused and nothing is written.

    Attributes:
        path: The repository-relative path whose fingerprint no longer matches.
    """

    code: ClassVar[str] = "lattice.stale_file"

    def __init__(self, path: str, message: str = "", *, hint: str = "") -> None:
        super().__init__(
            message or f"{path} changed since it was granted",
            hint=hint or "Run the task again so it sees the current file.",
        )
        self.path = path


class IllegalTransitionError(LatticeError):
    """The run machine was asked for a transition the state graph does not allow."""

    code: ClassVar[str] = "lattice.illegal_transition"


class SessionError(LatticeError):
    """A session cannot be created, read or reset."""

    code: ClassVar[str] = "lattice.session"


class SessionNotFoundError(SessionError):
    """No session with that id exists."""

    code: ClassVar[str] = "lattice.session_not_found"


class WorkerError(LatticeError):
    """A worker could not produce a response (it crashed, or has no answer left)."""

    code: ClassVar[str] = "lattice.worker"


class BudgetRefusedError(WorkerError):
    """The budget guard refused a paid run: it could take too much of the provider's window."""

    code: ClassVar[str] = "lattice.budget_refused"


class UnsafePathError(LatticeError):
    """A metadata path is a symlink or leads outside ``.lattice/``; nothing is written."""

    code: ClassVar[str] = "lattice.unsafe_path"
