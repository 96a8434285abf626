"""The turns of a run: the worker proposes, the runtime parses, lowers, verifies, decides.

:class:`TurnDriver` owns the part of a run between the first grant of context and the
verdict. Each pass of its loop is one worker turn; what the answer was decides the next
transition (``docs/lattice.md``, "State machine"):

- malformed or off-schema -> one ``PROTOCOL_REPAIR`` turn, then ``FAILED``;
- a context request -> ``CONTEXT_FAULT`` -> more pages -> ``CONTEXT_GRANTED``;
- a patch that does not lower -> ``PATCH_REVISION`` with the reason code (at most 2);
- a patch that lowers -> worktree transaction -> ``VERIFYING`` -> ``PASSED`` (applied unless
  ``--no-apply``) or ``PATCH_REVISION`` with the failing command's output tail.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Final

from lattice_runtime._files import lattice_dir
from lattice_runtime.compile import TaskIR, admit, default_commands
from lattice_runtime.compile.task import VerificationCommand
from lattice_runtime.errors import (
    LOWERING_REASONS,
    CommandNotAllowedError,
    LatticeError,
    LoweringError,
    StaleFileError,
)
from lattice_runtime.grants import GrantRegistry, fingerprint, operations_for
from lattice_runtime.kernel import ContextGrant, ContextKernel, MapEntry
from lattice_runtime.machine import cache
from lattice_runtime.machine.machine import RunMachine
from lattice_runtime.machine.outcome import MAX_REVISIONS, RunOptions, RunOutcome
from lattice_runtime.machine.states import RunState
from lattice_runtime.machine.telemetry import ProtocolDiagnostic, TurnRecord, VerificationRecord
from lattice_runtime.patch import PatchIR, lower
from lattice_runtime.protocol import (
    ContextRequest,
    Diagnostics,
    PatchProposal,
    PromptInput,
    PromptPage,
    ProtocolViolation,
    TurnKind,
    encode_response,
    parse_response,
    protocol_repair_feedback,
    render_prompt,
)
from lattice_runtime.verify import TransactionResult, apply_patch, run_transaction
from lattice_runtime.workers import GrantedPage, Worker, WorkerTurn
from repocontext.tokens import count_tokens

__all__ = ["TurnDriver"]

Step = Callable[[RunState, str], None]

_NOT_REVISABLE: Final = frozenset(
    {
        "registry_integrity",
        "workspace_required",
        "task_mismatch",
        "session_mismatch",
        "repository_mismatch",
        "base_commit_mismatch",
        "epoch_mismatch",
    }
)
"""Lowering reasons about the grants themselves: no revision of the patch can fix them."""


class TurnDriver:
    """Drives one run from its first context grant to a terminal state."""

    def __init__(
        self,
        root: Path,
        options: RunOptions,
        worker: Worker,
        task: TaskIR,
        machine: RunMachine,
        kernel: ContextKernel,
        registry: GrantRegistry,
        step: Step,
    ) -> None:
        """Hold the run's parts; :meth:`run` does the work."""
        self._root = root
        self._options = options
        self._worker = worker
        self._task = task
        self._machine = machine
        self._kernel = kernel
        self._registry = registry
        self._binding = registry.binding  # the run's own; a registry read back must match it
        self._registry_path = lattice_dir(root) / "grants" / f"{machine.run_id}.json"
        self._step = step
        self._pages: list[GrantedPage] = []
        self._prompt_pages: list[PromptPage] = []
        self._repo_map = ""
        self._map_entries: tuple[MapEntry, ...] = ()
        self._turns = 0
        self._repairs = 0
        self._revisions = 0
        self._refused: tuple[str, ...] = ()
        self._last: TransactionResult | None = None

    def run(self) -> RunOutcome:
        """Grant the first context, then take turns until a terminal state.

        Raises:
            LatticeError: A stage failed for good (the caller records ``FAILED``).
        """
        grant = self._kernel.initial_grant()
        self._take(grant)
        self._step(RunState.CONTEXT_GRANTED, _granted(grant))
        try:
            return self._take_turns()
        except LatticeError as exc:  # a worker or kernel failure no revision can fix
            return self._fail(f"{exc.code}: {exc.message}")

    def _take_turns(self) -> RunOutcome:
        kind: TurnKind = "initial"
        feedback: str | None = None
        cached = self._cached_patch()
        if cached is not None:
            self._step(RunState.PATCH_LOWERED, f"cache hit: {len(cached.changes)} changes")
            outcome = self._verify(cached, cached_proposal=None)
            if outcome is not None:
                return outcome
            cache.drop(self._root, self._cache_key())
            assert self._last is not None  # _verify returns None only after a failed check
            revision = self._revise("cached patch failed", _verification_feedback(self._last))
            if isinstance(revision, RunOutcome):
                return revision
            kind, feedback = revision
        while True:
            if self._turns >= self._task.budget.model_turns:
                return self._fail(f"turn_budget: {self._turns} worker turns used")
            next_turn = self._turn(kind, feedback)
            if isinstance(next_turn, RunOutcome):
                return next_turn
            kind, feedback = next_turn

    # -- one turn ------------------------------------------------------------------------

    def _turn(self, kind: TurnKind, feedback: str | None) -> RunOutcome | tuple[TurnKind, str]:
        self._turns += 1
        self._step(RunState.WORKER_RUNNING, f"turn {self._turns} ({kind})")
        prompt = render_prompt(
            PromptInput(
                task=self._task,
                turn=kind,
                pages=tuple(self._prompt_pages),
                repo_map=self._repo_map,
                feedback=feedback,
                faults_left=self._task.budget.context_faults - len(self._kernel.faults()),
                turns_left=self._task.budget.model_turns - self._turns,
            )
        )
        turn = WorkerTurn(
            number=self._turns,
            kind=kind,
            prompt=prompt,
            task=self._task,
            pages=tuple(self._pages),
            repo_map=self._map_entries,
            feedback=feedback,
        )
        raw = self._worker.respond(turn)
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        tokens = count_tokens(prompt)
        try:
            parsed = parse_response(raw)
        except ProtocolViolation as violation:
            self._note(violation.diagnostics, kind, tokens, digest, "protocol_error")
            if violation.repairable and self._repairs == 0:
                self._repairs += 1
                self._step(RunState.PROTOCOL_REPAIR, f"{violation.reason}: {violation.message}")
                return "protocol_repair", protocol_repair_feedback(violation)
            return self._fail(f"{_refusal_word(violation.reason)}: {violation.message}")
        response = parsed.response
        outcome = "context_request" if isinstance(response, ContextRequest) else "patch"
        self._note(parsed.diagnostics, kind, tokens, digest, outcome)
        self._step(RunState.RESPONSE_NORMALIZED, parsed.diagnostics.normalization)
        self._step(RunState.RESPONSE_VALIDATED, parsed.diagnostics.detected_shape)
        if isinstance(response, ContextRequest):
            return self._fault(response)
        return self._patch(response)

    def _note(
        self, diagnostics: Diagnostics, kind: TurnKind, tokens: int, digest: str, outcome: str
    ) -> None:
        self._machine.record_turn(TurnRecord(self._turns, kind, tokens, digest, outcome))
        self._machine.record_diagnostic(
            ProtocolDiagnostic(
                turn=self._turns,
                response_sha256=digest,
                shape=diagnostics.detected_shape,
                normalization=diagnostics.normalization,
                validation_error=diagnostics.reason,
            )
        )

    def _fault(self, request: ContextRequest) -> tuple[TurnKind, str]:
        asked = ", ".join(item.path_hint or item.symbol or "" for item in request.requests)
        self._step(RunState.CONTEXT_FAULT, f"asked for {asked}")
        self._machine.record_fault()
        grant = self._kernel.fault(request.requests)  # over budget: BudgetExhaustedError
        self._take(grant)
        self._step(RunState.CONTEXT_GRANTED, _granted(grant))
        refused = "".join(f"\n- not granted: {why}" for why in grant.refused)
        return "context_fault", f"Granted {len(grant.pages)} more page(s).{refused}"

    def _patch(self, proposal: PatchProposal) -> RunOutcome | tuple[TurnKind, str]:
        try:
            patch = self._lower(proposal)
        except LoweringError as exc:
            if exc.reason in _NOT_REVISABLE:  # the grants themselves are in doubt
                return self._fail(f"{exc.reason}: {exc.message}")
            return self._revise(f"lowering: {exc.reason}", _lowering_feedback(exc))
        self._step(RunState.PATCH_LOWERED, f"{len(patch.changes)} changes: {_paths(patch)}")
        outcome = self._verify(patch, cached_proposal=proposal)
        if outcome is not None:
            return outcome
        assert self._last is not None  # _verify returns None only after a failed transaction
        return self._revise("verification failed", _verification_feedback(self._last))

    def _revise(self, why: str, feedback: str) -> RunOutcome | tuple[TurnKind, str]:
        if self._revisions >= MAX_REVISIONS:
            return self._fail(f"{why} after {MAX_REVISIONS} revisions")
        self._revisions += 1
        self._step(RunState.PATCH_REVISION, why)
        return "patch_revision", feedback

    # -- transaction ---------------------------------------------------------------------

    def _verify(
        self, patch: PatchIR, *, cached_proposal: PatchProposal | None
    ) -> RunOutcome | None:
        commands = self._commands(patch.verification_commands)
        self._step(RunState.TRANSACTION_RUNNING, ", ".join(c.display for c in commands))
        result = run_transaction(
            self._root, patch, commands, timeout_seconds=self._options.timeout_seconds
        )  # a file changed since its grant: StaleFileError, nothing written
        self._last = result
        for item in result.results:
            self._machine.record_verification(
                VerificationRecord(
                    command=item.command.display,
                    exit_code=item.exit_code,
                    duration_seconds=item.duration_seconds,
                    timed_out=item.timed_out,
                )
            )
        summary = ", ".join(f"{r.command.display} -> {r.exit_code}" for r in result.results)
        self._step(RunState.VERIFYING, summary or "no command ran")
        if not result.passed:
            return None
        applied = False
        if self._options.apply:
            try:
                apply_patch(self._root, patch, result.diff)
            except StaleFileError as exc:
                return self._fail(f"stale_file: {exc.message}; nothing was written")
            applied = True
        if cached_proposal is not None and self._options.use_cache:
            cache.store(self._root, self._cache_key(), encode_response(cached_proposal))
        verb = "applied" if applied else "verified (not applied)"
        self._step(RunState.PASSED, f"{verb}: {summary}")
        return self._outcome(result, applied)

    def _commands(self, suggested: tuple[str, ...]) -> tuple[VerificationCommand, ...]:
        admitted: list[VerificationCommand] = []
        refused: list[str] = []
        for command in suggested:
            try:
                admitted.append(admit(command, self._task, self._root))
            except CommandNotAllowedError as exc:
                refused.append(f"{command[:200]}: {exc.message}")
        self._refused = (*self._refused, *refused)
        unique = tuple(dict.fromkeys(admitted))
        return unique or default_commands(self._task)

    def _lower(self, proposal: PatchProposal) -> PatchIR:
        # Lowering reads the registry back from disk and checks its digest, so grants changed
        # behind the run's back are registry_integrity (or a binding mismatch), never honoured.
        registry = GrantRegistry.load(self._registry_path)
        try:
            return lower(proposal, registry, self._binding, self._root)
        finally:  # lowering withdraws the handles of files that changed: keep that
            self._registry = registry
            self._registry.save(self._registry_path, root=self._root)

    # -- context -------------------------------------------------------------------------

    def _take(self, grant: ContextGrant) -> None:
        self._repo_map = grant.repo_map
        self._map_entries = grant.map_entries
        issued = 0
        for page in grant.pages:
            found = fingerprint(self._root, page.path)
            whole = page.kind == "file"
            operations = operations_for(
                self._root,
                page.path,
                whole_file=whole,
                tracked=found.tracked,
                symlink=(self._root / page.path).is_symlink(),
            )
            grant_lines = None if whole else page.lines
            edit = self._registry.grant(page.path, found, grant_lines, operations)
            issued += 1
            self._pages.append(
                GrantedPage(
                    page_id=page.id,
                    path=page.path,
                    lines=page.lines,
                    handle=edit.handle,
                    operations=operations,
                    whole_file=whole,
                    symbol=page.symbol,
                    content=page.content,
                )
            )
            self._prompt_pages.append(
                PromptPage(
                    page_id=page.id,
                    path=page.path,
                    lines=page.lines,
                    symbol=page.symbol,
                    handle=edit.handle,
                    operations=operations,
                    content=page.content,
                )
            )
        self._registry.save(self._registry_path, root=self._root)
        self._machine.record_pages(len(grant.pages))
        self._machine.record_grants(issued)

    # -- cache ---------------------------------------------------------------------------

    def _cache_key(self) -> str:
        return cache.key(
            self._task.id,
            self._binding.base_commit,
            self._worker.name,
            tuple(page.page_id for page in self._pages),
        )

    def _cached_patch(self) -> PatchIR | None:
        if not self._options.use_cache:
            return None
        raw = cache.load(self._root, self._cache_key())
        if raw is None:
            return None
        try:
            response = parse_response(raw).response
            if not isinstance(response, PatchProposal):
                return None
            return self._lower(response)
        except (ProtocolViolation, LoweringError):
            cache.drop(self._root, self._cache_key())  # no longer fits; ask the worker
            return None

    # -- endings -------------------------------------------------------------------------

    def _fail(self, reason: str) -> RunOutcome:
        self._step(RunState.FAILED, reason)
        return self._outcome(self._last, applied=False)

    def _outcome(self, result: TransactionResult | None, applied: bool) -> RunOutcome:
        return RunOutcome(
            record=self._machine.record,
            task=self._task,
            diff=result.diff if result is not None else "",
            applied=applied,
            verification=result.results if result is not None else (),
            refused_commands=self._refused,
        )


def _refusal_word(reason: str) -> str:
    # A refusal that is also a lowering reason (a worker setting transaction fields) keeps
    # the contract's word; the others say they are protocol refusals.
    return reason if reason in LOWERING_REASONS else f"protocol_{reason}"


def _granted(grant: ContextGrant) -> str:
    refused = f", {len(grant.refused)} refused" if grant.refused else ""
    return f"{len(grant.pages)} pages, {grant.page_tokens} tokens{refused}"


def _paths(patch: PatchIR) -> str:
    return ", ".join(f"{change.action} {change.path}" for change in patch.changes)


def _lowering_feedback(exc: LoweringError) -> str:
    return f"The patch was refused before anything ran: {exc.reason}: {exc.message}\n{exc.hint}"


def _verification_feedback(result: TransactionResult) -> str:
    lines = ["The patch applied in an isolated worktree, but verification failed:"]
    for item in result.results:
        status = "timed out (exit 124)" if item.timed_out else f"exit {item.exit_code}"
        lines.append(f"$ {item.command.display}  -> {status}")
        if not item.passed:
            lines.append(item.output_tail[-2000:])
    return "\n".join(lines)
