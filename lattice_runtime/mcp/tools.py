"""The six ``lattice_*`` tools: each parses its arguments and makes one call on the tasks.

A tool's docstring is the agent's contract (what it does, what it answers, what to call
next); ``docs/lattice-mcp.md`` says the same for people.
"""

from __future__ import annotations

import json
from typing import Annotated, Final

from mcp.types import ToolAnnotations
from pydantic import Field, JsonValue

from lattice_runtime.mcp._gate import READ_ONLY, ToolSpec, map_errors
from lattice_runtime.mcp.tasks import LatticeTasks
from lattice_runtime.mcp.wire import (
    ApplyResult,
    BeginResult,
    ContextItem,
    StatsResult,
    StatusResult,
    TurnResult,
)

__all__ = ["lattice_tools"]

MAX_TASK_CHARS: Final = 4000
"""The longest goal ``lattice_begin`` takes."""
MAX_REQUESTS: Final = 20
"""The most context requests one call may carry."""

TaskId = Annotated[
    str,
    Field(min_length=1, max_length=80, description="The taskId lattice_begin answered."),
]

STEP: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
"""A run step: writes the run's records under .lattice/, never the repository's files."""
APPLY: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def lattice_tools(tasks: LatticeTasks) -> list[ToolSpec]:
    """Return the tools bound to ``tasks`` (in the order clients list them)."""
    return [
        _begin(tasks),
        _request_context(tasks),
        _propose(tasks),
        _apply(tasks),
        _status(tasks),
        _stats(tasks),
    ]


def _begin(tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_begin(
        task: Annotated[
            str,
            Field(min_length=1, max_length=MAX_TASK_CHARS, description="The goal, in words."),
        ],
        repo: Annotated[
            str | None,
            Field(max_length=4096, description="The served repository (default); no other."),
        ] = None,
    ) -> BeginResult:
        """Start a Lattice run of a coding task; Lattice becomes your edit path for it.

        Compiles the task (`taskIR`: criteria, invariants, risk, budget, allowed verification
        commands), indexes the repository and grants the first pages: each with an
        `editHandle` and the `permissions` (operations) it allows; empty permissions mean
        read-only. `repositoryMap` lists the other files as [path, [symbols]]. `protocol` says
        how to answer. Next: lattice_propose with a patch, or lattice_request_context for more
        pages. Do not write files yourself; Lattice verifies the patch in a scratch worktree
        and writes only on lattice_apply. Beginning the same task again starts a new run.
        """
        tasks.check_repo(repo)
        return tasks.begin(task)

    return ToolSpec("lattice_begin", lattice_begin, "Begin a Lattice run", STEP)


def _request_context(tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_request_context(
        taskId: TaskId,
        requests: Annotated[
            list[ContextItem],
            Field(
                min_length=1,
                max_length=MAX_REQUESTS,
                description="What to see: each {reason, pathHint?, symbol?}, one of the two.",
            ),
        ],
    ) -> TurnResult:
        """Ask for more pages before proposing (one context fault of the task's budget).

        Answers the next turn with only the pages you did not have yet (`pages`; earlier
        handles stay valid; lattice_status returns all), `turn.feedback` naming what was not
        granted, and `turn.faultsLeft`. When the budget is spent the run ends FAILED
        (`done`, `reason`). Next: lattice_propose.
        """
        return tasks.request_context(taskId, requests)

    return ToolSpec(
        "lattice_request_context", lattice_request_context, "Request more context", STEP
    )


def _propose(tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_propose(
        taskId: TaskId,
        response: Annotated[
            dict[str, JsonValue] | str,
            Field(
                description="The protocol-v5 answer: the JSON object (or its text), usually "
                '{"kind":"patch","patch":{...}}.'
            ),
        ],
    ) -> TurnResult:
        """Propose a patch (or any protocol-v5 answer) for the waiting turn; get the verdict.

        The answer is parsed, lowered against the grants and verified in a scratch worktree
        with the allowlisted commands. PASSED: `diff` and `verification` (nothing written yet;
        next: lattice_apply). A patch that does not lower or fails verification gets a
        `patch_revision` turn (at most 2), malformed JSON one `protocol_repair` turn: read
        `turn.feedback` and propose again. Otherwise the run ends FAILED with `reason`.
        """
        raw = response if isinstance(response, str) else json.dumps(response)
        return tasks.propose(taskId, raw)

    return ToolSpec("lattice_propose", lattice_propose, "Propose a patch", STEP)


def _apply(tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_apply(
        taskId: TaskId,
        receipt: Annotated[
            str | None,
            Field(
                max_length=200,
                description="Explicit control only (required there): the one-use receipt "
                "lattice_refresh_context answered.",
            ),
        ] = None,
    ) -> ApplyResult:
        """Write the task's verified patch (a PASSED run) to the working tree with git apply.

        Every file is checked against its grant first: one changed since is refused with
        `lattice.stale_file` and nothing is written (begin the task again). Answers the
        `files` written. A run that did not pass, or is applied already: `lattice.session`.
        Under explicit control a `receipt` is required and used up by this call even when it
        is refused (`lattice.receipt_required`, `lattice.receipt_consumed`,
        `lattice.authorization_stale`): call lattice_refresh_context for a new one.
        """
        return tasks.apply(taskId, receipt)

    return ToolSpec("lattice_apply", lattice_apply, "Apply the verified patch", APPLY)


def _status(tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_status(taskId: TaskId) -> StatusResult:
        """The task's latest run: state, reason, transitions, telemetry, and its waiting turn.

        `pages` holds every page the waiting turn shows (all handles granted so far). Changes
        nothing. Next: answer the turn, or lattice_apply after PASSED.
        """
        return tasks.status(taskId)

    return ToolSpec("lattice_status", lattice_status, "Run status", READ_ONLY)


def _stats(tasks: LatticeTasks) -> ToolSpec:
    @map_errors
    def lattice_stats() -> StatsResult:
        """Totals over every Lattice run of the served repository (.lattice/runs/).

        Runs by state, worker turns, context faults, pages, edit handles, verification
        commands and their seconds.
        """
        return tasks.stats()

    return ToolSpec("lattice_stats", lattice_stats, "Run totals", READ_ONLY)
