"""The read commands: ``read`` (a file or a line range as on disk), ``symbol`` (definitions by
name, their source from disk) and ``grep`` (a pattern over the indexed files)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from repocontext.cli._index import (
    DataDir,
    JsonOption,
    RepoIdOption,
    StoreUrl,
    open_workspace,
    pick_repo,
    print_wire,
)
from repocontext.errors import InvalidInputError
from repocontext.pack import LineRange, Page, SymbolSources
from repocontext.search import (
    DEFAULT_CONTEXT_LINES,
    DEFAULT_GREP_PAGE,
    GrepMatch,
    GrepPage,
    GrepRequest,
)
from repocontext.wire import GrepResult, ReadResult, SymbolSourcesResult

__all__ = ["parse_lines", "register"]

_LINES = re.compile(r"(\d+)(?:-(\d*))?")


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``read``, ``symbol`` and ``grep`` commands to ``app``."""

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
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Print a file, or a line range of it, exactly as on disk (re-indexed when stale).

        The text goes to stdout unchanged; a summary line (lines, tokens, blob id, freshness
        and the next --lines when cut at the budget) goes to stderr. --json prints the
        repocontext_read result instead.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            page = workspace.page(repo, path, parse_lines(lines), budget_tokens=budget)
            if as_json:
                print_wire(ReadResult.of(page))
                return
            typer.echo(page.text.encode(), nl=False)  # (bytes: no newline translation)
            typer.echo(summary(page), err=True)

    @app.command()
    def symbol(
        names: Annotated[
            list[str],
            typer.Argument(
                metavar="NAME...",
                help="Qualified names, dotted tails of them (Class.method) or path::name.",
            ),
        ],
        budget: Annotated[
            int | None,
            typer.Option("--budget", help="Most tokens of source, whole definitions only."),
        ] = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Print the source of symbols by name, as on disk (re-indexed when stale).

        Each definition is printed after a line naming its file, lines and qualified name,
        with the headers of the classes around it; names not found (with close names),
        ambiguous names and definitions left out for --budget are reported on stderr.
        --json prints the repocontext_symbol result instead.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            repo = pick_repo(workspace, repo_id)
            sources = workspace.symbols(repo, names, budget_tokens=budget)
            if as_json:
                print_wire(SymbolSourcesResult.of(sources))
                return
            typer.echo(symbols_text(sources).encode(), nl=False)
            for line in symbols_notes(sources):
                typer.echo(line, err=True)

    @app.command()
    def grep(
        pattern: Annotated[str, typer.Argument(help="Text to find (a regex with --regex).")],
        regex: Annotated[
            bool, typer.Option("--regex", help="Read PATTERN as a regular expression (RE2).")
        ] = False,
        ignore_case: Annotated[
            bool, typer.Option("--ignore-case", "-i", help="Match letters in any case.")
        ] = False,
        context: Annotated[
            int, typer.Option("--context", "-C", help="Lines shown around a match, 0..10.")
        ] = DEFAULT_CONTEXT_LINES,
        glob: Annotated[
            str | None,
            typer.Option("--glob", help="Only files matching this gitignore-style glob."),
        ] = None,
        limit: Annotated[
            int, typer.Option("--limit", help="Most matches printed, 1..500.")
        ] = DEFAULT_GREP_PAGE,
        token: Annotated[
            str | None, typer.Option("--token", help="Continue after the previous page.")
        ] = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Search the indexed files for a text or a regular expression, line by line.

        Prints path:line:text for a match and path-line-text for context, a -- between
        groups (as grep does); when more matches exist, the --token of the next page goes
        to stderr. --json prints the repocontext_grep result instead.
        """
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            request = GrepRequest(
                repo_id=pick_repo(workspace, repo_id),
                pattern=pattern,
                regex=regex,
                case_sensitive=not ignore_case,
                glob=glob,
                context_lines=context,
                page_size=limit,
                token=token,
            )
            page = workspace.grep(request)
            if as_json:
                print_wire(GrepResult.of(page))
                return
            if page.matches:
                typer.echo(grep_text(page.matches).encode(), nl=False)
            typer.echo(grep_summary(page), err=True)


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


def symbols_text(sources: SymbolSources) -> str:
    """The definitions as text: a ``==>`` line each, the enclosing headers, then the code."""
    parts = []
    for served in sources.symbols:
        where = f"{served.path}:{served.start_line}-{served.end_line}"
        parts.append(
            f"==> {where}  {served.fq_name}  ({served.kind}, {served.token_count} tokens)\n"
        )
        parts += [_ended(outer.header) for outer in served.enclosing]
        parts.append(_ended(served.text))
    return "".join(parts)


def symbols_notes(sources: SymbolSources) -> list[str]:
    """What stderr says: names not served, ambiguous ones, what the budget left out, tokens."""
    notes = []
    for missing in sources.missing:
        hint = f" (close: {', '.join(missing.suggestions)})" if missing.suggestions else ""
        notes.append(f"not found: {missing.name}: {missing.reason}{hint}")
    notes += [
        f"ambiguous: {a.name} matched {a.matches} definitions ({a.served} shown); "
        "qualify it or use path::name"
        for a in sources.ambiguous
    ]
    notes += [
        f"left out for the budget: {o.fq_name} ({o.path}:{o.start_line}-{o.end_line}, "
        f"{o.token_count} tokens)"
        for o in sources.omitted
    ]
    notes.append(f"{len(sources.symbols)} definitions, {sources.token_count} tokens")
    return notes


def grep_text(matches: tuple[GrepMatch, ...]) -> str:
    """Matches as grep prints them: ``path:line:text``, context ``path-line-text``, ``--``."""
    lines: list[str] = []
    last: tuple[str, int] | None = None
    for match in matches:
        first = match.line - len(match.before)
        if last is not None and (last[0] != match.path or last[1] + 1 < first):
            lines.append("--")
        lines += [f"{match.path}-{first + i}-{text}" for i, text in enumerate(match.before)]
        lines.append(f"{match.path}:{match.line}:{match.text}")
        lines += [f"{match.path}-{match.line + 1 + i}-{text}" for i, text in enumerate(match.after)]
        last = (match.path, match.line + len(match.after))
    return "\n".join(lines) + "\n"


def grep_summary(page: GrepPage) -> str:
    """One line on a page: how many matches, files read, and the --token of the next page."""
    line = f"{len(page.matches)} matches, {page.files_searched} files searched"
    if page.continuation_token is not None:
        line += f"; more: --token {page.continuation_token}"
    return line


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
