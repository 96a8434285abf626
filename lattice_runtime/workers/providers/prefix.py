"""A turn's prompt as a stable protocol prefix plus the turn's own part.

Provider prompt caches hit only on a byte-identical prefix. The rendered prompt
(:func:`lattice_runtime.protocol.render_prompt`) puts the protocol's rules and response shapes
after the task, so a provider worker moves them out: the *stable prefix* (an opening line
plus the rules and response-format sections, copied from the renderer's own output) goes in
the system prompt and is the same bytes on every turn of every task; the *dynamic part* is the
rendered prompt with that section taken out (header, task, feedback, pages, map, commands).
Nothing is lost or reworded: the two parts hold exactly the rendered prompt's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from lattice_runtime.compile import TaskIR
from lattice_runtime.protocol import PROTOCOL_VERSION, PromptInput, render_prompt
from lattice_runtime.workers.turn import WorkerTurn

__all__ = ["PromptParts", "protocol_section", "split_prompt"]

_OPENING: Final = (
    f"You are a worker of the Lattice runtime (prompt protocol version {PROTOCOL_VERSION}). "
    "Each turn you receive a task, granted pages and a repository map, and you answer with "
    "exactly one response in one of the two shapes below.\n\n"
)
_RULES_MARK: Final = "\n## Rules\n"
_PAGES_MARK: Final = "\n## Pages\n"


@dataclass(frozen=True, slots=True)
class PromptParts:
    """A turn's prompt, split for provider caching.

    Attributes:
        stable: The protocol prefix: identical bytes on every turn.
        dynamic: The rest of the rendered prompt (this turn's task, feedback, pages, map).
    """

    stable: str
    dynamic: str


def protocol_section(task: TaskIR) -> str:
    """The rules and response-format sections, exactly as the renderer writes them.

    They do not depend on the task; ``task`` is only needed to render a reference prompt.

    Args:
        task: Any compiled task.

    Returns:
        The text from ``## Rules`` up to (not including) the next section after the
        response format.
    """
    reference = render_prompt(PromptInput(task, "initial", (), "", None, 0, 1))
    end = reference.rindex(_PAGES_MARK) + 1
    start = reference.rindex(_RULES_MARK, 0, end) + 1
    return reference[start:end]


def split_prompt(turn: WorkerTurn) -> PromptParts:
    """Split the turn's rendered prompt into the stable prefix and the dynamic part.

    Args:
        turn: The turn (its ``prompt`` is the rendered prompt).

    Returns:
        The parts; when the prompt does not hold the protocol section (a prompt rendered
        some other way), the dynamic part is the whole prompt.
    """
    section = protocol_section(turn.task)
    at = turn.prompt.find(section)
    if at < 0:
        return PromptParts(_OPENING + section, turn.prompt)
    return PromptParts(_OPENING + section, turn.prompt[:at] + turn.prompt[at + len(section) :])
