"""The tools' parameter kinds: one annotated type per kind of argument, bounds in the schema.

Every tool takes a repository id, a key, a path or free text through the types here, so
``tools/list`` publishes the same ``maxLength`` (and ranges) for the same kind everywhere and
the same bad value gets the same coded error from every tool: each type runs the one
validator of its kind (:mod:`repocontext.arguments`) before the tool body.
:class:`~repocontext.mcp.grants.GrantedServer` turns a schema violation into ``input.invalid``
naming the field and its range, and a validator's refusal into its own code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, Field

from repocontext import arguments
from repocontext.arguments import (
    MAX_ID_CHARS,
    MAX_KEY_CHARS,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_TEXT_CHARS,
    MAX_TOPIC_CHARS,
)

__all__ = [
    "Id",
    "MemoryKey",
    "Name",
    "NewRepoId",
    "OptionalRelPath",
    "OptionalRepoId",
    "OptionalTopic",
    "RecordKey",
    "RelPath",
    "RepoId",
    "Text",
    "Topic",
    "WorkspacePath",
]


def _optional(check: Callable[[str], str]) -> Callable[[str | None], str | None]:
    """``check`` for an optional argument (``None`` passes)."""
    return lambda value: None if value is None else check(value)


RepoId = Annotated[
    str,
    Field(min_length=1, max_length=MAX_ID_CHARS, description="Repository id."),
    AfterValidator(arguments.repo_id),
]
OptionalRepoId = Annotated[
    str | None,
    Field(max_length=MAX_ID_CHARS, description="Repository id."),
    AfterValidator(_optional(arguments.repo_id)),
]
NewRepoId = Annotated[
    str | None,
    Field(max_length=MAX_ID_CHARS, description="Id (plain name); default: the directory name."),
    AfterValidator(_optional(arguments.new_repo_id)),
]
RecordKey = Annotated[
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS, description="A key, e.g. repo/r/file/a.py."),
    AfterValidator(arguments.key_text),
]
Topic = Annotated[
    str,
    Field(max_length=MAX_TOPIC_CHARS, description="A memory topic: todo, decisions..."),
    AfterValidator(arguments.topic),
]
OptionalTopic = Annotated[
    str | None,
    Field(max_length=MAX_TOPIC_CHARS, description="A memory topic."),
    AfterValidator(_optional(arguments.topic)),
]
MemoryKey = Annotated[
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS, description="repo/{repoId}/mem/{topic}/{id}"),
    AfterValidator(arguments.memory_key),
]
RelPath = Annotated[
    str,
    Field(max_length=MAX_PATH_CHARS, description="Path relative to the repository root."),
    AfterValidator(arguments.repo_path),
]
OptionalRelPath = Annotated[
    str | None,
    Field(max_length=MAX_PATH_CHARS, description="Path relative to the repository root."),
    AfterValidator(_optional(arguments.repo_path)),
]
WorkspacePath = Annotated[
    str,
    Field(max_length=MAX_PATH_CHARS, description="Directory inside the workspace root."),
    AfterValidator(arguments.repo_path),
]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
"""Free text (a query, a task, a glob, a receipt)."""
Id = Annotated[str, Field(max_length=MAX_ID_CHARS)]
"""A short identifier (a topic, an entry id, a relation)."""
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
"""A short label (an owner, a session, a tag)."""
