"""Index commands: ``index``, ``status``, ``outline``, ``related``, ``changed``."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic.alias_generators import to_camel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from repocontext.arguments import checked_range
from repocontext.errors import InvalidInputError, StoreNotFoundError, StoreReadOnlyError
from repocontext.index import (
    MAX_RELATED_PAGE,
    RELATED_PAGE,
    IndexProgress,
    WalkOptions,
    resolve_path,
)
from repocontext.settings import Settings
from repocontext.store import Store
from repocontext.wire import (
    ChangedResult,
    IndexStatusResult,
    OutlineResult,
    RelatedResult,
    WireModel,
)
from repocontext.workspace import Workspace

__all__ = [
    "DataDir",
    "JsonOption",
    "RepoIdOption",
    "StoreUrl",
    "emit",
    "emit_wire",
    "open_workspace",
    "pick_repo",
    "print_wire",
    "register",
]

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Store directory (env REPOCONTEXT_DATA_DIR).")
]
StoreUrl = Annotated[
    str | None,
    typer.Option(
        "--store-url",
        help="Store database, e.g. postgresql://user@host/db; default: LMDB in the data"
        " directory (env REPOCONTEXT_STORE_URL).",
    ),
]
RepoIdOption = Annotated[
    str | None,
    typer.Option("--repo-id", help="Repository id; default: the only registered one."),
]


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the index commands to ``app``."""

    @app.command()
    def index(
        path: Annotated[str, typer.Argument(help="Repository directory to index.")],
        repo_id: Annotated[
            str | None, typer.Option("--repo-id", help="Id to register it under.")
        ] = None,
        include: Annotated[
            list[str] | None, typer.Option(help="Only paths matching (repeatable).")
        ] = None,
        exclude: Annotated[
            list[str] | None, typer.Option(help="Skip paths matching (repeatable).")
        ] = None,
        no_filters: Annotated[
            bool,
            typer.Option(
                "--no-filters", help="Drop the globs kept from earlier runs (index everything)."
            ),
        ] = False,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Index a repository in the foreground, with a progress bar (incremental on reruns).

        Globs given replace the ones kept with the repository; without any, the kept ones
        apply again (``--no-filters`` drops them).

        The embedding pass that follows (setting ``embedder``) is waited for, so the command
        ends with search fully ready. The store is swept once first (expired records, old
        tombstones, the change feed's bound), as a server does every minute.
        """
        with fail_cleanly():
            if not str(path).strip():
                raise InvalidInputError("the repository path is empty", hint="Pass a directory.")
            root = resolve_path(path)
            settings = settings_for(data_dir=data_dir, store_url=store_url, workspace_root=root)
            options = None  # the filters of the last run (defaults for a new repository)
            if include or exclude or no_filters:
                options = WalkOptions(
                    include_globs=tuple(include or ()),
                    exclude_globs=tuple(exclude or ()),
                    max_file_bytes=settings.max_file_bytes,
                )
            with Workspace.open(settings) as workspace:
                # What a server's sweeper does every minute (TTLs, old tombstones, the change
                # feed's bound), before this run adds to the feed.
                workspace.sweep()
                if as_json:
                    status = workspace.bootstrap(root, repo_id, options, background=False)
                else:
                    with _ProgressBar() as bar:
                        status = workspace.bootstrap(
                            root, repo_id, options, background=False, on_progress=bar.update
                        )
                workspace.wait_embedded(status.repo_id)
                status = workspace.index_status(status.repo_id)
            emit_wire(IndexStatusResult.of(status), as_json, _status_text)

    @app.command()
    def status(
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show the last or current index run of a repository."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            report = workspace.index_status(pick_repo(workspace, repo_id))
            emit_wire(IndexStatusResult.of(report), as_json, _status_text)

    @app.command()
    def outline(
        path: Annotated[str, typer.Argument(help="File path relative to the repository root.")],
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
        max_symbols: Annotated[
            int | None,
            typer.Option("--max-symbols", min=1, help="Print at most this many symbols."),
        ] = None,
    ) -> None:
        """Print a file's symbols from the index."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            repo = pick_repo(workspace, repo_id)
            view = workspace.outline(repo, path, max_symbols=max_symbols)
            emit_wire(OutlineResult.of(view), as_json, _outline_text)

    @app.command()
    def related(
        path: Annotated[str, typer.Argument(help="File path relative to the repository root.")],
        offset: Annotated[int, typer.Option(help="Skip this many items of each list.")] = 0,
        limit: Annotated[
            int, typer.Option(help=f"Items per list, 1..{MAX_RELATED_PAGE}.")
        ] = RELATED_PAGE,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Print a file's imports, references, dependents and covering tests."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            checked_range("offset", offset, 0, math.inf)
            checked_range("limit", limit, 1, MAX_RELATED_PAGE)
            repo = pick_repo(workspace, repo_id)
            view = workspace.related(repo, path, offset=offset, limit=limit)
            emit_wire(RelatedResult.of(view), as_json, _related_text)

    @app.command()
    def changed(
        path: Annotated[str | None, typer.Argument(help="Limit to this file or directory.")] = None,
        repo_id: RepoIdOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Print what changed on disk since the last index run, and what it impacts."""
        with fail_cleanly(), open_workspace(settings_for, data_dir, store_url) as workspace:
            report = workspace.changed(pick_repo(workspace, repo_id), path)
            emit_wire(ChangedResult.of(report), as_json, _changed_text)


class _ProgressBar:
    def __init__(self) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("walking", total=None)

    def __enter__(self) -> _ProgressBar:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def update(self, progress: IndexProgress, done: int, total: int) -> None:
        self._progress.update(self._task, description=progress.phase, completed=done, total=total)


@contextmanager
def open_workspace(
    settings_for: Any, data_dir: Path | None, store_url: str | None = None
) -> Iterator[Workspace]:
    """Open the existing workspace of the command's settings.

    Every command but ``index`` (and the archive's) needs a registered repository, so a data
    directory without a store is refused: a mistyped ``--data-dir`` is an error, not an
    empty answer and a stray store. A store that cannot be written is opened for reading:
    reading commands work, and a writing one fails at its first write (``store.read_only``).

    Raises:
        StoreNotFoundError: No store in the data directory (or the database of a store URL).
    """
    settings: Settings = settings_for(data_dir=data_dir, store_url=store_url)
    if not Store.exists(settings.data_dir, settings.store_url):
        if settings.store_url:
            raise StoreNotFoundError(
                "no store in the database of --store-url",
                hint="Index a repository into it first (repocontext index PATH --store-url ...), "
                "or check the URL's database and table_prefix.",
            )
        raise StoreNotFoundError(f"no store in {settings.data_dir}")
    try:
        workspace = Workspace.open(settings)
    except StoreReadOnlyError as cannot_write:
        try:
            workspace = Workspace.open(settings, read_only=True)
        except StoreReadOnlyError:
            raise StoreReadOnlyError(
                f"{cannot_write.message}; reading needs the store writable too",
                hint="LMDB records its readers in the store's lock.mdb, so even a reading "
                "command needs write access to the store directory: run as the user who owns "
                f"{settings.data_dir}, or give this user write access to it.",
            ) from cannot_write
    with workspace:
        yield workspace


def pick_repo(workspace: Workspace, repo_id: str | None) -> str:
    if repo_id is not None:
        if not repo_id.strip():
            raise InvalidInputError("--repo-id is empty", hint="Pass a registered repository id.")
        return repo_id
    repos = workspace.list_repos()
    if len(repos) == 1:
        return repos[0].repo_id
    raise InvalidInputError(
        "pass --repo-id: "
        + (
            "no repository is registered"
            if not repos
            else f"{len(repos)} repositories are registered"
        ),
        hint="List them with `repocontext repos list`, or index one with `repocontext index PATH`.",
    )


def emit(value: Any, as_json: bool, text: Any) -> None:
    """Print ``value``: as JSON in the tools' wire form (camelCase), or rendered by ``text``.

    ``value`` is a result dataclass or a dict or list holding them; ``text`` receives the
    plain form (``dataclasses.asdict``: snake_case field names).
    """
    if as_json:
        typer.echo(json.dumps(_camel_cased(value), indent=2, default=str))
    else:
        typer.echo(text(_plain(value)))


def emit_wire(result: WireModel, as_json: bool, text: Callable[[dict[str, Any]], str]) -> None:
    """Print a tool result: its wire JSON (what the MCP tool sends), or rendered by ``text``.

    ``text`` receives the same camelCase object.
    """
    if as_json:
        print_wire(result)
    else:
        typer.echo(text(result.wire()))


def show_wire(result: WireModel, as_json: bool, text: str) -> None:
    """Print a tool result's wire JSON, or ``text`` (already rendered from the typed value)."""
    if as_json:
        print_wire(result)
    else:
        typer.echo(text)


def print_wire(result: WireModel) -> None:
    """Print a tool result's wire JSON: the object the MCP tool sends as structured content."""
    typer.echo(json.dumps(result.wire(), indent=2))


def _camel_cased(value: Any) -> Any:
    """``value`` with every dataclass as a dict of camelCase field names (the MCP wire form).

    The keys of plain dicts are data (paths, tree names, memory fields) and stay as they are.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            to_camel(f.name): _camel_cased(getattr(value, f.name))
            for f in dataclasses.fields(value)
        }
    if isinstance(value, dict):
        return {key: _camel_cased(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_camel_cased(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _status_text(status: dict[str, Any]) -> str:
    counters = status.get("counters") or {}
    phase = f"phase {status['phase']}, " if status.get("phase") else ""
    lines = [
        f"{status['repoId']}: {status['status']} ({phase}"
        f"attempt {status.get('attempt')}, {status.get('elapsedMs')} ms)"
    ]
    lines += [f"  {name}: {value}" for name, value in counters.items()]
    error = status.get("error")
    if isinstance(error, dict):
        lines.append(f"  error [{error.get('code')}]: {error.get('message')}")
    elif error:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def _outline_text(view: dict[str, Any]) -> str:
    if not view["exists"]:
        return "not indexed"
    lines = [f"{view['language'] or 'unknown language'} · {view['tokenCount']} tokens"]
    if view["syntaxErrors"]:
        lines.append("(syntax errors: the outline may miss definitions; read the file to be sure)")
    if view["truncated"]:
        lines.append(f"(the first of its {view['symbolCount']} symbols, depth-first)")

    def walk(symbols: list[dict[str, Any]], depth: int) -> None:
        for s in symbols:
            lines.append(
                f"{'  ' * depth}{s['kind']} {s['name']}  "
                f"L{s['startLine']}-{s['endLine']}  {s['fullyQualifiedName']}"
            )
            walk(s.get("children") or [], depth + 1)

    walk(view["symbols"], 0)
    return "\n".join(lines)


def _related_text(view: dict[str, Any]) -> str:
    if not view["exists"]:
        return "not indexed"
    lines: list[str] = []
    for section in ("imports", "references", "dependents", "coveringTests"):
        lines.append(f"{section}:")
        lines += [f"  {link['path']}  ({link['reason']})" for link in view[section]]
    if view["truncated"]:
        lines.append(f"(more: --offset {view['nextOffset']})")
    return "\n".join(lines)


def _changed_text(report: dict[str, Any]) -> str:
    lines = [f"checked {report['checkedFiles']} files in {report['elapsedMs']} ms"]
    for section in ("added", "updated", "removed"):
        lines += [f"{section[0].upper()} {path}" for path in report[section]]
    lines += [f"impacted {item['path']}  ({item['reason']})" for item in report["impacted"]]
    return "\n".join(lines)
