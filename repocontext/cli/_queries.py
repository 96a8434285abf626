"""Where ``search`` and ``context`` get their text: the argument, a file or stdin, or a batch.

A query given as an argument cannot start with ``-`` (the command line reads it as an
option) unless it follows ``--``; ``--query-file PATH`` (``-``: stdin) reads it instead. The
batch form, ``search --queries FILE.jsonl``, answers one JSON object per line in one process:
a line's own fields win over the command's options, a bad line is answered with its coded
error and never stops the others.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import typer

from repocontext.cli._index import open_workspace, pick_repo
from repocontext.errors import InvalidInputError, RepoContextError
from repocontext.search import SearchRequest
from repocontext.wire import SearchResultWire
from repocontext.workspace import Workspace

__all__ = [
    "BATCH_FIELDS",
    "SearchDefaults",
    "answer_batch",
    "one_text",
    "read_text",
    "run_batch",
    "warn",
]

BATCH_FIELDS: Final = ("query", "id", "k", "mode", "scope", "language", "glob")
"""The fields a line of ``search --queries`` may have (``query`` is required)."""


@dataclass(frozen=True, slots=True)
class SearchDefaults:
    """The command's options: what a batch line that does not say otherwise asks for."""

    k: int
    scope: str
    mode: str | None
    languages: tuple[str, ...]
    globs: tuple[str, ...]


def read_text(source: str, what: str) -> str:
    """The text of a file, or of stdin for ``-``.

    Raises:
        InvalidInputError: The file cannot be read or is not UTF-8 text.
    """
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InvalidInputError(
            f"cannot read the {what} file {source!r}: {reason}",
            hint="Pass a readable UTF-8 file, or '-' to read standard input.",
        ) from exc


def one_text(argument: str | None, text_file: str | None, what: str, option: str) -> str:
    """The query (or task) from exactly one of its argument and its file option.

    Raises:
        InvalidInputError: Both or neither are given, or the file cannot be read.
    """
    if (argument is None) == (text_file is None):
        given = "both" if argument is not None else "neither"
        raise InvalidInputError(
            f"give the {what} either as an argument or with {option}, not {given}",
            hint=f"A {what} starting with '-' goes after `--` (`-- '-x flag'`), or in a file "
            f"({option} PATH, or {option} - for standard input).",
        )
    return argument if argument is not None else read_text(str(text_file), what).strip()


def warn(warnings: tuple[str, ...] | list[str]) -> None:
    """Print each warning of an answer on stderr (stdout stays the answer)."""
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)


def run_batch(
    settings_for: Any,
    data_dir: Path | None,
    store_url: str | None,
    repo_id: str | None,
    source: str,
    defaults: SearchDefaults,
) -> None:
    """``search --queries``: answer every line, then exit 1 when any failed.

    Raises:
        typer.Exit: Some line was answered with an error (after all lines were answered).
    """
    with open_workspace(settings_for, data_dir, store_url) as workspace:
        answered, failed = answer_batch(workspace, pick_repo(workspace, repo_id), source, defaults)
    if failed:
        typer.echo(f"error: {failed} of {answered} queries failed (see their lines)", err=True)
        raise typer.Exit(1)


def answer_batch(
    workspace: Workspace, repo_id: str, source: str, defaults: SearchDefaults
) -> tuple[int, int]:
    """Answer every line of ``source`` as one JSON line on stdout; return (answered, failed).

    Each line is ``{"id": ..., "result": <search --json>}`` or ``{"id": ..., "error":
    {code, message, hint}}``; ``id`` is the line's own, else its 1-based line number. A
    warning is printed on stderr once, however many answers carry it.

    Raises:
        InvalidInputError: The file cannot be read.
    """
    answered = failed = 0
    warned: set[str] = set()
    for number, line in _lines(read_text(source, "queries")):
        answered += 1
        item_id: object = number
        try:
            item = _item(line, number)
            item_id = item.get("id", number)
            result = workspace.search(_request(repo_id, item, defaults))
        except RepoContextError as exc:
            failed += 1
            out: dict[str, object] = {"id": item_id, "error": exc.to_dict()}
        else:
            warn([w for w in result.warnings if w not in warned])
            warned.update(result.warnings)
            out = {"id": item_id, "result": SearchResultWire.of(result).wire()}
        typer.echo(json.dumps(out, separators=(",", ":"), ensure_ascii=False))
    return answered, failed


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():  # (blank lines ask nothing: no answer line)
            yield number, line


def _item(line: str, number: int) -> dict[str, object]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"line {number} is not JSON: {exc.msg}",
            hint='Write one object per line: {"query": "...", "id": "q1"}.',
        ) from exc
    if not isinstance(item, dict):
        raise InvalidInputError(
            f"line {number} is not a JSON object",
            hint='Write one object per line: {"query": "...", "id": "q1"}.',
        )
    unknown = sorted(set(item) - set(BATCH_FIELDS))
    if unknown:
        raise InvalidInputError(
            f"line {number} has unknown fields: {', '.join(unknown)}",
            hint=f"A line may have {', '.join(BATCH_FIELDS)} (query is required).",
        )
    return item


def _request(repo_id: str, item: dict[str, object], defaults: SearchDefaults) -> SearchRequest:
    query = item.get("query")
    if not isinstance(query, str):
        raise InvalidInputError(
            "the line's query is missing or not a string",
            hint='Every line needs "query": "what to look for".',
        )
    k = item.get("k", defaults.k)
    if not isinstance(k, int) or isinstance(k, bool):
        raise InvalidInputError("k must be a whole number", hint="Use k from 1 to 100.")
    return SearchRequest.of(
        repo_id,
        query,
        k,
        _text_field(item, "scope", defaults.scope),
        mode=_text_field(item, "mode", defaults.mode),
        languages=_list_field(item, "language", defaults.languages),
        globs=_list_field(item, "glob", defaults.globs),
    )


def _text_field(item: dict[str, object], name: str, default: str | None) -> str | None:
    value = item.get(name, default)
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string", hint=f'Write "{name}": "...".')
    return value


def _list_field(item: dict[str, object], name: str, default: tuple[str, ...]) -> list[str]:
    value = item.get(name, list(default))
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    raise InvalidInputError(
        f"{name} must be a string or a list of strings",
        hint=f'Write "{name}": "..." or "{name}": ["...", "..."].',
    )
