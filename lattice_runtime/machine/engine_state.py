"""What a run between two worker answers must remember, and its file.

A run driven one answer at a time (a manual handoff answered tomorrow, an agent calling the
MCP tools) lives across processes, so the engine keeps its working state next to the run
record: ``.lattice/runs/<run id>.engine.json``, rewritten atomically after every step. It
holds the pages granted with their handles (the kernel takes them up again), the faults
served, the turn counters, the answer the run waits for, and the verified patch with its diff
(so a later ``apply`` needs nothing else). The grant registry stays in its own digest-checked
file (``.lattice/grants/``): the state never carries authority.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, get_args

from lattice_runtime._files import atomic_write, lattice_dir
from lattice_runtime.compile import VerificationCommand
from lattice_runtime.errors import SessionError
from lattice_runtime.grants import Binding
from lattice_runtime.kernel import ContextPage, Embedder, FaultRecord, MapEntry
from lattice_runtime.machine.outcome import RunOptions
from lattice_runtime.patch import FileChange, PatchIR
from lattice_runtime.protocol import ContextRequestItem, TurnKind
from lattice_runtime.verify import CommandResult
from lattice_runtime.workers import GrantedPage

__all__ = [
    "ENGINE_STATE_VERSION",
    "EngineState",
    "decode_patch",
    "encode_patch",
    "load_state",
    "save_state",
    "state_path",
]

ENGINE_STATE_VERSION: Final = 1
_TURN_KINDS: Final = frozenset(get_args(TurnKind))


@dataclass(slots=True)
class EngineState:
    """The engine's working state (mutable: the engine updates it step by step).

    Attributes:
        run_id: The run.
        worker: The worker's name (part of the verified-patch cache key).
        binding: The run's grant binding (a registry read back must match it).
        options: What the run was asked to do (a resumed run does the same).
        pending: The turn kind the run waits for an answer to; ``None`` when it waits for none.
        feedback: The feedback of that turn.
        awaiting: A turn was handed out and its answer is awaited (state ``WORKER_RUNNING``).
        turns: Worker turns taken.
        prompt_tokens: Exact tokens of the prompt of the turn handed out last.
        repairs: Protocol-repair turns taken.
        revisions: Patch revisions taken.
        refused: Suggested commands the allowlist refused (never run).
        pages: The kernel's pages, in grant order.
        granted: The same pages as the worker sees them, with handles.
        repo_map: The map text of the last grant.
        map_entries: The map as entries.
        faults: The context faults served.
        verification: The last transaction's command results.
        diff: The last verified patch's diff.
        verified: The last verified patch (kept for a later apply).
        applied: The verified patch was applied to the user's tree.
    """

    run_id: str
    worker: str
    binding: Binding
    options: RunOptions
    pending: TurnKind | None = "initial"
    feedback: str | None = None
    awaiting: bool = False
    turns: int = 0
    prompt_tokens: int = 0
    repairs: int = 0
    revisions: int = 0
    refused: tuple[str, ...] = ()
    pages: list[ContextPage] = field(default_factory=list)
    granted: list[GrantedPage] = field(default_factory=list)
    repo_map: str = ""
    map_entries: tuple[MapEntry, ...] = ()
    faults: tuple[FaultRecord, ...] = ()
    verification: tuple[CommandResult, ...] = ()
    diff: str = ""
    verified: PatchIR | None = None
    applied: bool = False


def state_path(repo_root: Path, run_id: str) -> Path:
    """``<repo>/.lattice/runs/<run id>.engine.json``."""
    return lattice_dir(repo_root) / "runs" / f"{run_id}.engine.json"


def save_state(repo_root: Path, state: EngineState) -> None:
    """Write ``state`` atomically.

    Raises:
        UnsafePathError: The destination is a symlink.
    """
    data = json.dumps(_encode(state), sort_keys=True, separators=(",", ":"))
    atomic_write(state_path(repo_root, state.run_id), data.encode(), root=repo_root)


def load_state(repo_root: Path, run_id: str) -> EngineState:
    """Read the state of run ``run_id``.

    Raises:
        SessionError: There is none (the run never waited for an answer) or it is damaged.
    """
    path = state_path(repo_root, run_id)
    if path.is_symlink() or not path.is_file():
        raise SessionError(
            f"run {run_id} has no resumable state",
            hint="Only a run that waits for an answer (a handoff) can continue.",
        )
    try:
        return _decode(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise SessionError(f"the state of run {run_id} is damaged: {exc}") from None


# -- codec (the one place that handles the state's raw JSON) -------------------------------

Json = dict[str, Any]


def _encode(state: EngineState) -> Json:
    binding = state.binding
    return {
        "version": ENGINE_STATE_VERSION,
        "runId": state.run_id,
        "worker": state.worker,
        "binding": [
            binding.task_id,
            binding.session_id,
            binding.repository_id,
            binding.base_commit,
            binding.epoch,
        ],
        "options": _options(state.options),
        "pending": state.pending,
        "feedback": state.feedback,
        "awaiting": state.awaiting,
        "counters": [state.turns, state.repairs, state.revisions, state.prompt_tokens],
        "refused": list(state.refused),
        "pages": [_page(page) for page in state.pages],
        "granted": [_granted(page) for page in state.granted],
        "repoMap": state.repo_map,
        "mapEntries": [[entry.path, list(entry.symbols)] for entry in state.map_entries],
        "faults": [_fault(fault) for fault in state.faults],
        "verification": [_result(result) for result in state.verification],
        "diff": state.diff,
        "verified": None if state.verified is None else encode_patch(state.verified),
        "applied": state.applied,
    }


def _options(options: RunOptions) -> Json:
    return {
        "goal": options.goal,
        "apply": options.apply,
        "sessionId": options.session_id,
        "constraints": list(options.constraints),
        "timeoutSeconds": options.timeout_seconds,
        "useCache": options.use_cache,
        "embedder": options.embedder,
    }


def _unoptions(item: Json) -> RunOptions:
    embedder = item["embedder"]
    if embedder not in get_args(Embedder):
        raise ValueError(f"embedder {embedder!r}")
    return RunOptions(
        goal=str(item["goal"]),
        apply=bool(item["apply"]),
        session_id=item["sessionId"],
        constraints=tuple(map(str, item["constraints"])),
        timeout_seconds=float(item["timeoutSeconds"]),
        use_cache=bool(item["useCache"]),
        embedder=embedder,
    )


def _page(page: ContextPage) -> Json:
    return {
        "id": page.id,
        "kind": page.kind,
        "path": page.path,
        "symbol": page.symbol,
        "fingerprint": page.fingerprint,
        "lines": list(page.lines),
        "content": page.content,
        "reason": page.reason,
        "provenance": list(page.provenance),
        "tokens": page.token_count,
        "isTest": page.is_test,
    }


def _granted(page: GrantedPage) -> Json:
    return {
        "pageId": page.page_id,
        "path": page.path,
        "lines": list(page.lines),
        "handle": page.handle,
        "operations": list(page.operations),
        "wholeFile": page.whole_file,
        "symbol": page.symbol,
    }


def _fault(fault: FaultRecord) -> Json:
    return {
        "number": fault.number,
        "requests": [[r.reason, r.path_hint, r.symbol] for r in fault.requests],
        "granted": list(fault.granted),
        "refused": list(fault.refused),
    }


def _result(result: CommandResult) -> Json:
    return {
        "argv": list(result.command.argv),
        "origin": result.command.origin,
        "exitCode": result.exit_code,
        "seconds": result.duration_seconds,
        "tail": result.output_tail,
        "timedOut": result.timed_out,
    }


def encode_patch(patch: PatchIR) -> Json:
    """A patch IR as JSON (content base64), for the state and the patch cache."""
    return {
        "summary": patch.summary,
        "commands": list(patch.verification_commands),
        "changes": [
            {
                "path": change.path,
                "action": change.action,
                "expected": change.expected_fingerprint,
                "content": None
                if change.new_content is None
                else base64.b64encode(change.new_content).decode("ascii"),
            }
            for change in patch.changes
        ],
    }


def _decode(data: Json) -> EngineState:
    if data["version"] != ENGINE_STATE_VERSION:
        raise ValueError(f"state version {data['version']!r}")
    task_id, session_id, repository_id, base_commit, epoch = data["binding"]
    binding = Binding(str(task_id), str(session_id), str(repository_id), str(base_commit), epoch)
    pending = data["pending"]
    if pending is not None and pending not in _TURN_KINDS:
        raise ValueError(f"turn kind {pending!r}")
    turns, repairs, revisions, prompt_tokens = (int(n) for n in data["counters"])
    pages = [_unpage(item) for item in data["pages"]]
    granted = [_ungranted(item, pages) for item in data["granted"]]
    return EngineState(
        run_id=str(data["runId"]),
        worker=str(data["worker"]),
        binding=binding,
        options=_unoptions(data["options"]),
        pending=pending,
        feedback=data["feedback"],
        awaiting=bool(data["awaiting"]),
        turns=turns,
        prompt_tokens=prompt_tokens,
        repairs=repairs,
        revisions=revisions,
        refused=tuple(str(r) for r in data["refused"]),
        pages=pages,
        granted=granted,
        repo_map=str(data["repoMap"]),
        map_entries=tuple(MapEntry(str(p), tuple(map(str, s))) for p, s in data["mapEntries"]),
        faults=tuple(_unfault(item) for item in data["faults"]),
        verification=tuple(_unresult(item) for item in data["verification"]),
        diff=str(data["diff"]),
        verified=None if data["verified"] is None else decode_patch(data["verified"], binding),
        applied=bool(data["applied"]),
    )


def _unpage(item: Json) -> ContextPage:
    first, last = item["lines"]
    return ContextPage(
        id=str(item["id"]),
        kind=item["kind"],
        path=str(item["path"]),
        symbol=item["symbol"],
        fingerprint=str(item["fingerprint"]),
        lines=(int(first), int(last)),
        content=str(item["content"]),
        reason=item["reason"],
        provenance=tuple(map(str, item["provenance"])),
        token_count=int(item["tokens"]),
        is_test=bool(item["isTest"]),
    )


def _ungranted(item: Json, pages: list[ContextPage]) -> GrantedPage:
    first, last = item["lines"]
    content = next((page.content for page in pages if page.id == item["pageId"]), "")
    return GrantedPage(
        page_id=str(item["pageId"]),
        path=str(item["path"]),
        lines=(int(first), int(last)),
        handle=str(item["handle"]),
        operations=tuple(map(str, item["operations"])),
        whole_file=bool(item["wholeFile"]),
        symbol=item["symbol"],
        content=content,
    )


def _unfault(item: Json) -> FaultRecord:
    requests = tuple(ContextRequestItem(str(r), p, s) for r, p, s in item["requests"])
    return FaultRecord(
        int(item["number"]), requests, tuple(item["granted"]), tuple(item["refused"])
    )


def _unresult(item: Json) -> CommandResult:
    command = VerificationCommand(tuple(map(str, item["argv"])), str(item["origin"]))
    return CommandResult(
        command,
        int(item["exitCode"]),
        float(item["seconds"]),
        str(item["tail"]),
        bool(item["timedOut"]),
    )


def decode_patch(item: Json, binding: Binding) -> PatchIR:
    """The patch IR :func:`encode_patch` wrote, bound to ``binding``."""
    changes = tuple(
        FileChange(
            path=str(change["path"]),
            action=change["action"],
            expected_fingerprint=change["expected"],
            new_content=None
            if change["content"] is None
            else base64.b64decode(change["content"], validate=True),
        )
        for change in item["changes"]
    )
    return PatchIR(binding, str(item["summary"]), changes, tuple(item["commands"]))
