"""Handles for pages, and the turn a worker sees.

Every page the kernel grants gets an edit handle in the run's digest-checked registry
(``.lattice/grants/<run id>.json``), with the operations its file class allows: a slice may be
edited inside its lines, a whole source file replaced or deleted, a test, configuration,
untracked or symlinked file not at all. The turn a worker sees is rendered from the engine's
state: the prompt (protocol version 5) and the same pages, map and feedback as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lattice_runtime.compile import TaskIR
from lattice_runtime.grants import Binding, GrantRegistry, fingerprint, operations_for
from lattice_runtime.kernel import ContextPage
from lattice_runtime.machine.engine_state import EngineState
from lattice_runtime.protocol import PromptInput, PromptPage, render_prompt
from lattice_runtime.workers import GrantedPage, WorkerTurn

__all__ = ["issue_handles", "render_turn"]


def issue_handles(
    root: Path, registry_path: Path, binding: Binding, pages: Sequence[ContextPage]
) -> list[GrantedPage]:
    """Grant a handle per page in the run's registry (read back, checked, saved again).

    Raises:
        LoweringError: ``registry_integrity``: the saved registry was changed.
        StaleFileError: A page's file vanished since it was read.
        UnsafePathError: The registry path is a symlink.
    """
    registry = (
        GrantRegistry.load(registry_path) if registry_path.exists() else GrantRegistry(binding)
    )
    granted: list[GrantedPage] = []
    for page in pages:
        found = fingerprint(root, page.path)
        whole = page.kind == "file"
        operations = operations_for(
            root,
            page.path,
            whole_file=whole,
            tracked=found.tracked,
            symlink=(root / page.path).is_symlink(),
        )
        edit = registry.grant(page.path, found, None if whole else page.lines, operations)
        granted.append(
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
    registry.save(registry_path, root=root)
    return granted


def render_turn(task: TaskIR, state: EngineState) -> WorkerTurn:
    """The turn the run waits for an answer to, as the worker sees it."""
    kind = state.pending or "initial"
    prompt = render_prompt(
        PromptInput(
            task=task,
            turn=kind,
            pages=tuple(_prompt_page(page) for page in state.granted),
            repo_map=state.repo_map,
            feedback=state.feedback,
            faults_left=task.budget.context_faults - len(state.faults),
            turns_left=task.budget.model_turns - state.turns,
        )
    )
    return WorkerTurn(
        number=state.turns,
        kind=kind,
        prompt=prompt,
        task=task,
        pages=tuple(state.granted),
        repo_map=state.map_entries,
        feedback=state.feedback,
    )


def _prompt_page(page: GrantedPage) -> PromptPage:
    return PromptPage(
        page_id=page.page_id,
        path=page.path,
        lines=page.lines,
        symbol=page.symbol,
        handle=page.handle,
        operations=page.operations,
        content=page.content,
    )
