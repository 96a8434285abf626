"""Retrieval commands: ``search``, ``context`` and ``stats``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Annotated, Any, Final

import typer

from repocontext.cli._index import (
    DataDir,
    JsonOption,
    RepoIdOption,
    StoreUrl,
    emit,
    emit_wire,
    open_workspace,
    pick_repo,
)
from repocontext.cli._queries import SearchDefaults, one_text, run_batch, warn
from repocontext.errors import InvalidInputError, StoreUnavailableError, UnauthorizedError
from repocontext.pack import (
    DEFAULT_BUDGET,
    DEFAULT_TOP,
    MAX_BUDGET,
    MAX_TOP,
    MIN_BUDGET,
    MIN_TOP,
    ContextRequest,
    wire_json,
)
from repocontext.search import DEFAULT_K, MAX_K, MIN_K, SearchRequest
from repocontext.wire import ContextResultWire, SearchResultWire

__all__ = ["register"]

MISMATCH: Final = "keyword.embedder_mismatch"
ModeOption = Annotated[
    str | None,
    typer.Option(
        "--mode",
        help="keyword, semantic or hybrid (default: hybrid when vectors are ready, else keyword).",
    ),
]


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the retrieval commands to ``app``."""

    @app.command()
    def search(
        query: Annotated[
            str | None,
            typer.Argument(help="What to look for (starting with '-': after `--`)."),
        ] = None,
        k: Annotated[int, typer.Option("-k", help=f"Hits, {MIN_K}..{MAX_K}.")] = DEFAULT_K,
        scope: Annotated[
            str, typer.Option(help="code, memory (entries) or all (unknown: code).")
        ] = "code",
        mode: ModeOption = None,
        language: Annotated[
            list[str] | None,
            typer.Option("--language", help="Only files of this language (repeatable)."),
        ] = None,
        glob: Annotated[
            list[str] | None,
            typer.Option(
                "--glob", help="Only paths matching this glob, e.g. 'src/**' (repeatable)."
            ),
        ] = None,
        query_file: Annotated[
            str | None,
            typer.Option("--query-file", help="Read the query from a file ('-': stdin)."),
        ] = None,
        queries: Annotated[
            str | None,
            typer.Option(
                "--queries", help="Answer each JSON line of this file ('-': stdin) in one process."
            ),
        ] = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Rank a repository's files for a query, with the reasons of every hit."""
        defaults = SearchDefaults(k, scope, mode, tuple(language or ()), tuple(glob or ()))
        with fail_cleanly():
            if queries is not None:
                if query is not None or query_file is not None:
                    raise InvalidInputError(
                        "--queries answers the queries of its file: give no other query",
                        hint="Put every query in the file, one JSON object per line.",
                    )
                run_batch(settings_for, data_dir, store_url, repo_id, queries, defaults)
                return
            text = one_text(query, query_file, "query", "--query-file")
            with open_workspace(settings_for, data_dir, store_url) as workspace:
                repo = pick_repo(workspace, repo_id)
                request = SearchRequest.of(
                    repo, text, k, scope, mode=mode, languages=language, globs=glob
                )
                result = workspace.search(request)
            warn(result.warnings)
            emit_wire(SearchResultWire.of(result), as_json, _search_text)

    @app.command()
    def context(
        task: Annotated[
            str | None, typer.Argument(help="The task, in words (starting with '-': after `--`).")
        ] = None,
        budget: Annotated[
            int, typer.Option("--budget", help=f"Token budget, {MIN_BUDGET}..{MAX_BUDGET}.")
        ] = DEFAULT_BUDGET,
        top: Annotated[
            int, typer.Option("--top", help=f"Files to consider, {MIN_TOP}..{MAX_TOP}.")
        ] = DEFAULT_TOP,
        detail: Annotated[str, typer.Option(help="paths, outline, slices or auto.")] = "auto",
        session: Annotated[str | None, typer.Option(help="Session id (6 h memory).")] = None,
        mode: ModeOption = None,
        task_file: Annotated[
            str | None,
            typer.Option(
                "--query-file", "--task-file", help="Read the task from a file ('-': stdin)."
            ),
        ] = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
        json_code: Annotated[
            bool, typer.Option("--json-code", help="Print the JSON with the code in it too.")
        ] = False,
    ) -> None:
        """Build a context bundle for a task under an exact token budget.

        Prints the bundle's text (per unit a header line and the code), then one summary
        line; with --json, the structured result the MCP tool sends.
        """
        with fail_cleanly():
            text = one_text(task, task_file, "task", "--query-file")
            with open_workspace(settings_for, data_dir, store_url) as workspace:
                repo = pick_repo(workspace, repo_id)
                request = ContextRequest.of(
                    repo,
                    text,
                    top=top,
                    budget=budget,
                    detail=detail,
                    session=session,
                    mode=mode,
                    json_code=json_code,
                )
                bundle = workspace.context(request)
                wire = ContextResultWire.of(bundle).wire()
                if wire["retrievalPath"] == MISMATCH:
                    warn(workspace.search_warnings(repo))
            json_out = as_json or json_code
            typer.echo(wire_json(wire) if json_out else _context_text(bundle.text, wire))

    @app.command()
    def stats(
        url: Annotated[
            str, typer.Option(help="Base URL of a running HTTP server.")
        ] = "http://127.0.0.1:8765",
        window: Annotated[float | None, typer.Option(help="Window in seconds.")] = None,
        token: Annotated[
            str | None,
            typer.Option(
                envvar="REPOCONTEXT_TOKEN", help="Bearer token (a server with a tokens file)."
            ),
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Token economics of the context bundles a running server sent (its /stats)."""
        with fail_cleanly():
            query = f"?windowSeconds={window}" if window is not None else ""
            request = urllib.request.Request(f"{url.rstrip('/')}/stats{query}")
            if token:
                request.add_header("Authorization", f"Bearer {token}")
            try:
                with urllib.request.urlopen(request, timeout=10) as reply:
                    figures = json.loads(reply.read())
            except urllib.error.HTTPError as exc:
                if exc.code != 401:
                    raise StoreUnavailableError(f"{url} answered {exc.code}") from exc
                raise UnauthorizedError(
                    f"{url} needs a bearer token for /stats",
                    hint="Pass --token (or REPOCONTEXT_TOKEN) with a token of its tokens file.",
                ) from exc
            except (urllib.error.URLError, OSError) as exc:
                raise StoreUnavailableError(
                    f"no server answered at {url}: {exc}",
                    hint="Start one with `make run` or `repocontext serve --transport http`.",
                ) from exc
            emit(figures, as_json, lambda f: "\n".join(f"{k}: {v}" for k, v in f.items()))


def _search_text(wire: dict[str, Any]) -> str:
    lines = [f"mode {wire['mode']} ({wire['retrievalPath']})"]
    for hit in wire["hits"]:
        where = f":{hit['lines'][0]}-{hit['lines'][1]}" if hit.get("lines") else ""
        name = hit["path"] or hit["key"]
        lines.append(f"{hit['score']:>8.3f}  {name}{where}  {' '.join(hit['reasons'])}")
    return "\n".join(lines)


def _context_text(text: str, wire: dict[str, Any]) -> str:
    """The bundle's text block, then one summary line."""
    summary = (
        f"-- {wire['detail']} bundle: {wire['responseTokens']}/{wire['budgetTokens']} tokens, "
        f"{len(wire['entries'])} files, {sum(len(e['units']) for e in wire['entries'])} units, "
        f"{len(wire['reused'])} reused" + (", truncated" if wire["truncated"] else "")
    )
    return text + summary
