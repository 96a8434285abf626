"""A run driven one worker answer at a time: the engine every worker and surface shares.

:class:`RunEngine` owns a run from its start to its verdict (``docs/lattice.md``, "Pipeline").
It hands out one turn at a time (:meth:`RunEngine.next_turn`) and takes the worker's raw
answer (:meth:`RunEngine.submit`); what the answer was decides the next transition:

- malformed or off-schema -> one ``PROTOCOL_REPAIR`` turn, then ``FAILED``;
- a context request -> ``CONTEXT_FAULT`` -> more pages -> ``CONTEXT_GRANTED``;
- a patch that does not lower -> ``PATCH_REVISION`` with the reason code (at most 2);
- a patch that lowers -> worktree transaction -> ``VERIFYING`` -> ``PASSED`` (applied unless
  the run was started without apply) or ``PATCH_REVISION`` with the failing command's tail.

Between two steps everything the run needs is on disk (the run record, the digest-checked
grant registry and :mod:`.engine_state`), so a run can wait for an answer in another process —
a manual handoff, or an agent calling the MCP tools — and :meth:`RunEngine.resume` takes it up.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Final

from lattice_runtime._files import lattice_dir
from lattice_runtime.compile import TaskIR, compile_task
from lattice_runtime.errors import (
    LOWERING_REASONS,
    LatticeError,
    LoweringError,
    SessionError,
    StaleFileError,
)
from lattice_runtime.grants import GrantRegistry
from lattice_runtime.kernel import ContextGrant, ContextKernel
from lattice_runtime.machine import cache
from lattice_runtime.machine.engine_state import EngineState, load_state, save_state
from lattice_runtime.machine.granting import issue_handles, render_turn
from lattice_runtime.machine.machine import RunMachine
from lattice_runtime.machine.outcome import MAX_REVISIONS, Observer, RunOptions, RunOutcome
from lattice_runtime.machine.start import Started, start_run
from lattice_runtime.machine.states import TERMINAL_STATES, RunState
from lattice_runtime.machine.telemetry import ProtocolDiagnostic, TurnRecord
from lattice_runtime.machine.verdict import (
    admitted_commands,
    granted_summary,
    lowering_feedback,
    patch_summary,
    record_results,
    verification_feedback,
)
from lattice_runtime.patch import PatchIR, lower
from lattice_runtime.protocol import (
    ContextRequest,
    Diagnostics,
    PatchProposal,
    ProtocolViolation,
    TurnKind,
    parse_response,
    protocol_repair_feedback,
)
from lattice_runtime.verify import apply_patch, run_transaction
from lattice_runtime.workers import WorkerTurn
from lattice_runtime.workers.providers.usage import ProviderUsage
from repocontext.tokens import count_tokens

__all__ = ["RunEngine"]

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


class RunEngine:
    """One run, one step at a time (see the module docstring)."""

    def __init__(self, started: Started, kernel: ContextKernel, state: EngineState) -> None:
        """Hold a started run (use :meth:`begin` or :meth:`resume`)."""
        self._root = started.root
        self._options = started.options
        self._task = started.task
        self._machine = started.machine
        self._notify = started.observer
        self._kernel = kernel
        self._state = state
        self._registry_path = lattice_dir(self._root) / "grants" / f"{state.run_id}.json"
        self._usage: ProviderUsage | None = None

    # -- lifecycle -----------------------------------------------------------------------

    @classmethod
    def begin(
        cls, repo_root: Path, options: RunOptions, *, worker: str, observer: Observer | None = None
    ) -> RunEngine:
        """Start a run: compile, index, grant the first context (and reuse a cached patch).

        A failure after the run exists ends it ``FAILED`` (see :attr:`done`); only errors
        before that raise.

        Raises:
            TaskInvalidError: The goal does not compile, or ``repo_root`` is not the top of a
                git repository with a commit.
            SessionNotFoundError: ``options.session_id`` names no session.
            ContextError: The repository cannot be indexed.
        """
        started = start_run(repo_root, options, observer)
        started.step(RunState.COMPILED, _compiled(started.task))
        try:
            kernel = ContextKernel.open(started.root, started.task, embedder=options.embedder)
        except LatticeError as exc:
            started.step(RunState.FAILED, f"{exc.code}: {exc.message}")
            raise
        state = EngineState(
            run_id=started.machine.run_id,
            worker=worker,
            binding=started.binding(kernel.index.repo_id),
            options=options,
        )
        engine = cls(started, kernel, state)
        files = len(kernel.index.workspace.files(kernel.index.repo_id))
        engine._guarded(engine._first_grant, f"{files} files")
        return engine

    @classmethod
    def resume(cls, repo_root: Path, run_id: str, *, observer: Observer | None = None) -> RunEngine:
        """Take up a run that waits for an answer (started in this or another process).

        Raises:
            SessionError: The run has no resumable state, or is damaged.
            LatticeError: No record of that run exists.
        """
        root = repo_root.resolve()
        machine = RunMachine.resume(root, run_id)
        state = load_state(root, run_id)
        options = state.options
        task = compile_task(options.goal, root, constraints=options.constraints)
        if task.id != machine.record.task.get("id"):
            raise SessionError(f"run {run_id} was compiled differently; it cannot continue")
        started = Started(root, options, task, machine, observer)
        kernel = ContextKernel.open(root, task, embedder=options.embedder)
        kernel.restore(state.pages, state.faults)
        return cls(started, kernel, state)

    def close(self) -> None:
        """Release the kernel's index (the run's files stay)."""
        self._kernel.close()

    def __enter__(self) -> RunEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- views ---------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._machine.run_id

    @property
    def task(self) -> TaskIR:
        """The compiled task."""
        return self._task

    @property
    def state(self) -> RunState:
        """Where the run is."""
        return self._machine.state

    @property
    def done(self) -> bool:
        """The run reached ``PASSED``, ``FAILED`` or ``CANCELLED``."""
        return self._machine.state in TERMINAL_STATES

    @property
    def awaiting(self) -> bool:
        """A turn was handed out and its answer is awaited."""
        return self._state.awaiting

    def outcome(self) -> RunOutcome:
        """The run as it stands (final once :attr:`done`)."""
        return RunOutcome(
            record=self._machine.record,
            task=self._task,
            diff=self._state.diff,
            applied=self._state.applied,
            verification=self._state.verification,
            refused_commands=self._state.refused,
        )

    # -- turns ---------------------------------------------------------------------------

    def next_turn(self) -> WorkerTurn | None:
        """The turn the worker must answer (``WORKER_RUNNING``); ``None`` once done.

        Asked again before an answer, it hands out the same turn again.
        """
        if self.done or self._state.pending is None:
            return None
        if not self._state.awaiting:
            if self._state.turns >= self._task.budget.model_turns:
                self._end(RunState.FAILED, f"turn_budget: {self._state.turns} worker turns used")
                return None
            self._state.turns += 1
            self._state.awaiting = True
            kind = self._state.pending
            self._step(RunState.WORKER_RUNNING, f"turn {self._state.turns} ({kind})")
            turn = self._turn()
            self._state.prompt_tokens = count_tokens(turn.prompt)  # counted once per turn
            self._save()
            return turn
        return self._turn()

    def submit(self, raw: str, usage: ProviderUsage | None = None) -> None:
        """Take the worker's raw answer to the awaited turn and carry the run on.

        ``usage`` is what a provider reported for the turn (kept in the run's telemetry).

        Raises:
            SessionError: No turn awaits an answer.
        """
        if self.done or not self._state.awaiting:
            raise SessionError(
                f"run {self.run_id} awaits no answer (state {self.state.value})",
                hint="Ask for the next turn first.",
            )
        self._state.awaiting = False
        self._usage = usage
        self._guarded(self._answer, raw)

    def fail(self, reason: str) -> None:
        """End the run ``FAILED`` (a worker that cannot answer, an operator's decision)."""
        self._end(RunState.FAILED, reason)

    def cancel(self, reason: str) -> None:
        """End the run ``CANCELLED``."""
        self._end(RunState.CANCELLED, reason)

    def apply(self) -> None:
        """Apply a passed run's verified patch that was not applied yet (``git apply``).

        Raises:
            SessionError: The run did not pass, or its patch is applied already.
            StaleFileError: A file changed since its grant; nothing was written.
        """
        verified = self._state.verified
        if self.state is not RunState.PASSED or verified is None:
            raise SessionError(f"run {self.run_id} has no verified patch to apply")
        if self._state.applied:
            raise SessionError(f"run {self.run_id}'s patch is applied already")
        apply_patch(self._root, verified, self._state.diff)
        self._state.applied = True
        self._save()

    # -- one answer ----------------------------------------------------------------------

    def _turn(self) -> WorkerTurn:
        return render_turn(self._task, self._state)

    def _answer(self, raw: str) -> None:
        kind = self._state.pending or "initial"
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        tokens = self._state.prompt_tokens
        try:
            parsed = parse_response(raw)
        except ProtocolViolation as violation:
            self._note(violation.diagnostics, kind, tokens, digest, "protocol_error")
            if violation.repairable and self._state.repairs == 0:
                self._state.repairs += 1
                reason = f"{violation.reason}: {violation.message}"
                feedback = protocol_repair_feedback(violation)
                self._await(RunState.PROTOCOL_REPAIR, reason, "protocol_repair", feedback)
                return
            word = violation.reason
            word = word if word in LOWERING_REASONS else f"protocol_{word}"
            self._end(RunState.FAILED, f"{word}: {violation.message}")
            return
        response = parsed.response
        outcome = "context_request" if isinstance(response, ContextRequest) else "patch"
        self._note(parsed.diagnostics, kind, tokens, digest, outcome)
        self._step(RunState.RESPONSE_NORMALIZED, parsed.diagnostics.normalization)
        self._step(RunState.RESPONSE_VALIDATED, parsed.diagnostics.detected_shape)
        if isinstance(response, ContextRequest):
            self._fault(response)
        else:
            self._patch(response)

    def _note(
        self, diagnostics: Diagnostics, kind: TurnKind, tokens: int, digest: str, outcome: str
    ) -> None:
        turn = self._state.turns
        self._machine.record_turn(TurnRecord(turn, kind, tokens, digest, outcome, self._usage))
        self._machine.record_diagnostic(
            ProtocolDiagnostic(
                turn=turn,
                response_sha256=digest,
                shape=diagnostics.detected_shape,
                normalization=diagnostics.normalization,
                validation_error=diagnostics.reason,
            )
        )

    def _fault(self, request: ContextRequest) -> None:
        asked = ", ".join(item.path_hint or item.symbol or "" for item in request.requests)
        self._step(RunState.CONTEXT_FAULT, f"asked for {asked}")
        self._machine.record_fault()
        grant = self._kernel.fault(request.requests)  # over budget: BudgetExhaustedError
        self._state.faults = self._kernel.faults()
        self._take(grant)
        refused = "".join(f"\n- not granted: {why}" for why in grant.refused)
        feedback = f"Granted {len(grant.pages)} more page(s).{refused}"
        self._await(RunState.CONTEXT_GRANTED, granted_summary(grant), "context_fault", feedback)

    def _patch(self, proposal: PatchProposal) -> None:
        try:
            patch = self._lower(proposal)
        except LoweringError as exc:
            if exc.reason in _NOT_REVISABLE:  # the grants themselves are in doubt
                self._end(RunState.FAILED, f"{exc.reason}: {exc.message}")
            else:
                self._revise(f"lowering: {exc.reason}", lowering_feedback(exc))
            return
        self._step(RunState.PATCH_LOWERED, f"{len(patch.changes)} changes: {patch_summary(patch)}")
        self._verify(patch, store_in_cache=True)

    def _revise(self, why: str, feedback: str) -> None:
        if self._state.revisions >= MAX_REVISIONS:
            self._end(RunState.FAILED, f"{why} after {MAX_REVISIONS} revisions")
            return
        self._state.revisions += 1
        self._await(RunState.PATCH_REVISION, why, "patch_revision", feedback)

    def _lower(self, proposal: PatchProposal) -> PatchIR:
        # Lowering reads the registry back from disk and checks its digest, so grants changed
        # behind the run's back are registry_integrity (or a binding mismatch), never honoured.
        registry = GrantRegistry.load(self._registry_path)
        try:
            return lower(proposal, registry, self._state.binding, self._root)
        finally:  # lowering withdraws the handles of files that changed: keep that
            registry.save(self._registry_path, root=self._root)

    # -- the transaction -----------------------------------------------------------------

    def _verify(self, patch: PatchIR, *, store_in_cache: bool) -> bool:
        commands, refused = admitted_commands(self._task, self._root, patch.verification_commands)
        self._state.refused = (*self._state.refused, *refused)
        self._step(RunState.TRANSACTION_RUNNING, ", ".join(c.display for c in commands))
        result = run_transaction(
            self._root, patch, commands, timeout_seconds=self._options.timeout_seconds
        )  # a file changed since its grant: StaleFileError, nothing written
        self._state.verification = result.results
        self._state.diff = result.diff
        summary = record_results(self._machine, result)
        self._step(RunState.VERIFYING, summary)
        if not result.passed:
            self._revise("verification failed", verification_feedback(result))
            return False
        self._state.verified = patch
        if self._options.apply:
            try:
                apply_patch(self._root, patch, result.diff)
            except StaleFileError as exc:
                self._end(RunState.FAILED, f"stale_file: {exc.message}; nothing was written")
                return False
            self._state.applied = True
        if store_in_cache and self._options.use_cache:
            cache.store(self._root, self._cache_key(), patch)
        verb = "applied" if self._state.applied else "verified (not applied)"
        self._end(RunState.PASSED, f"{verb}: {summary}")
        return True

    # -- context -------------------------------------------------------------------------

    def _first_grant(self, indexed: str) -> None:
        self._step(RunState.INDEXED, indexed)
        grant = self._kernel.initial_grant()
        self._take(grant)
        self._step(RunState.CONTEXT_GRANTED, granted_summary(grant))
        self._save()
        cached = cache.load(self._root, self._cache_key()) if self._options.use_cache else None
        if cached is None:
            return
        try:
            patch = cached.rebind(self._state.binding)
        except LatticeError:
            cache.drop(self._root, self._cache_key())
            return
        self._step(RunState.PATCH_LOWERED, f"cache hit: {patch_summary(patch)}")
        if not self._verify(patch, store_in_cache=False):
            cache.drop(self._root, self._cache_key())

    def _take(self, grant: ContextGrant) -> None:
        self._state.repo_map = grant.repo_map
        self._state.map_entries = grant.map_entries
        granted = issue_handles(self._root, self._registry_path, self._state.binding, grant.pages)
        self._state.pages.extend(grant.pages)
        self._state.granted.extend(granted)
        self._machine.record_pages(len(grant.pages))
        self._machine.record_grants(len(granted))

    def _cache_key(self) -> str:
        files = self._kernel.index.workspace.files(self._kernel.index.repo_id)
        return cache.key(
            self._state.binding.repository_id,
            self._state.binding.base_commit,
            self._task,
            tuple((node.path, node.blob_id or "") for node in files),
        )

    # -- steps and endings ---------------------------------------------------------------

    def _guarded(self, action: Callable[[str], None], argument: str) -> None:
        # A stage failure no revision can fix ends the run FAILED (the record says why);
        # anything else is a bug: the record says FAILED too, and the error propagates.
        try:
            action(argument)
        except LatticeError as exc:
            self._end(RunState.FAILED, f"{exc.code}: {exc.message}")
        except Exception as exc:
            self._end(RunState.FAILED, f"internal_error: {type(exc).__name__}: {exc}")
            raise
        finally:
            self._save()

    def _await(self, state: RunState, reason: str, kind: TurnKind, feedback: str) -> None:
        self._state.pending = kind
        self._state.feedback = feedback
        self._step(state, reason)

    def _step(self, state: RunState, reason: str) -> None:
        self._machine.transition(state, reason)
        if self._notify is not None:
            self._notify(state, reason)

    def _end(self, state: RunState, reason: str) -> None:
        if not self.done:
            self._state.pending = None
            self._state.awaiting = False
            self._step(state, reason)
        self._save()

    def _save(self) -> None:
        save_state(self._root, self._state)


def _compiled(task: TaskIR) -> str:
    criteria = len(task.acceptance_criteria)
    commands = len(task.allowed_verification_commands)
    return f"risk {task.risk}, {criteria} criteria, {commands} commands"
