"""The ``read`` command: a file of a repository, or a line range, as on disk (a page)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from repocontext.cli._index import DataDir, JsonOption, open_workspace, print_wire
from repocontext.errors import InvalidInputError
from repocontext.pack import LineRange, Page
from repocontext.wire import ReadResult

__all__ = ["parse_lines", "register"]

_LINES = re.compile(r"(\d+)(?:-(\d*))?")


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``read`` command to ``app``."""

    @app.command()
    def read(
        repo: Annotated[str, typer.Argument(metavar="repo_id", help="Repository id.")],
        path: Annotated[str, typer.Argument(help="File path relative to the repository root.")],
        lines: Annotated[
            str | None,
            typer.Option("--lines", help="A-B (inclusive), A- (to the end) or A (one line)."),
        ] = None,
        budget: Annotated[
            int | None, typer.Option("--budget", help="Most tokens of text, cut at whole lines.")
        ] = None,
        data_dir: DataDir = None,
        as_json: JsonOption = False,
    ) -> None:
        """Print a file, or a line range of it, exactly as on disk (re-indexed when stale).

        The text goes to stdout unchanged; a summary line (lines, tokens, blob id, freshness
        and the next --lines when cut at the budget) goes to stderr. --json prints the
        repocontext_read result instead.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir) as workspace:
            page = workspace.page(repo, path, parse_lines(lines), budget_tokens=budget)
            if as_json:
                print_wire(ReadResult.of(page))
                return
            typer.echo(page.text.encode(), nl=False)  # (bytes: no newline translation)
            typer.echo(summary(page), err=True)


def parse_lines(value: str | None) -> LineRange | None:
    """``--lines`` as a range: ``A-B``, ``A-`` (to the end) or ``A`` (that line only).

    Raises:
        InvalidInputError: The value is none of those forms.
    """
    if value is None:
        return None
    matched = _LINES.fullmatch(value.strip())
    if matched is None:
        raise InvalidInputError(
            f"--lines {value[:40]!r} is no line range",
            hint="Pass A-B (1-based, inclusive), A- (to the end) or A (one line).",
        )
    start, end = matched.group(1), matched.group(2)
    if end is None:
        return int(start), int(start)
    return int(start), int(end) if end else None


def summary(page: Page) -> str:
    """One line on a page: where it is, what it cost, whether the index agrees, what's next."""
    state = "fresh" if page.fresh else "not fresh (the index holds another version)"
    line = (
        f"{page.path} lines {page.start_line}-{page.end_line}, {page.token_count} tokens, "
        f"blob {page.blob_id}, {state}"
    )
    if page.continuation is not None:
        line += f"; cut at the budget, next: --lines {page.continuation}-"
    return line
