"""The ``repocontext`` command: a thin layer over the workspace and the servers."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from repocontext.cli._archive import register as register_archive_commands
from repocontext.cli._claims import register as register_claim_commands
from repocontext.cli._doctor import doctor_report, render_text
from repocontext.cli._index import StoreUrl
from repocontext.cli._index import register as register_index_commands
from repocontext.cli._map import register as register_map_command
from repocontext.cli._memory import register as register_memory_commands
from repocontext.cli._reading import register as register_read_command
from repocontext.cli._repos import register as register_repo_commands
from repocontext.cli._retrieval import register as register_retrieval_commands
from repocontext.errors import RepoContextError
from repocontext.settings import Settings

__all__ = ["app", "main"]

app = typer.Typer(
    name="repocontext",
    help="Durable, conflict-free codebase memory for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
)


class TransportChoice(enum.StrEnum):
    """The ``--transport`` values."""

    stdio = "stdio"
    http = "http"


class EmbedderChoice(enum.StrEnum):
    """The ``--embedder`` values."""

    static = "static"
    minilm = "minilm"
    off = "off"


class RoleChoice(enum.StrEnum):
    """The ``--local-role`` values."""

    reader = "reader"
    curator = "curator"


class RestoreChoice(enum.StrEnum):
    """The ``--archive-restore`` values."""

    auto = "auto"
    always = "always"
    off = "off"


class ReconcileChoice(enum.StrEnum):
    """The ``--reconcile`` values."""

    watch = "watch"
    poll = "poll"
    off = "off"


DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Store directory (env REPOCONTEXT_DATA_DIR)."),
]


def _print_version(value: bool) -> None:
    if value:
        from repocontext import __version__

        typer.echo(f"repocontext {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Durable, conflict-free codebase memory for AI coding agents."""


@contextmanager
def _fail_cleanly() -> Iterator[None]:
    # The CLI's top level: a known failure becomes one line on stderr and exit code 1.
    try:
        yield
    except RepoContextError as exc:
        typer.echo(f"error [{exc.code}]: {exc.message}\nhint: {exc.hint}", err=True)
        raise typer.Exit(1) from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'settings'}: {error['msg']}"
            for error in exc.errors()
        )
        typer.echo(
            f"error [input.invalid]: invalid setting: {problems}\n"
            "hint: Check the flag or its REPOCONTEXT_* variable (docs/configuration.md).",
            err=True,
        )
        raise typer.Exit(2) from exc


def build_settings(**flags: Any) -> Settings:
    """Return settings from ``REPOCONTEXT_*`` variables, overridden by the flags given.

    ``flags`` are :class:`Settings` fields; one left at ``None`` was not given, so its
    variable (or the default) applies.

    Raises:
        ValidationError: A flag or variable has an invalid value (or names no setting).
    """
    return Settings(**{name: value for name, value in flags.items() if value is not None})


@app.command()
def serve(
    transport: Annotated[
        TransportChoice | None,
        typer.Option(help="MCP transport (env REPOCONTEXT_TRANSPORT; default: stdio)."),
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="HTTP bind address (env REPOCONTEXT_HOST).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port (env REPOCONTEXT_PORT).")] = None,
    data_dir: DataDirOption = None,
    store_url: StoreUrl = None,
    enable_writes: Annotated[
        bool | None,
        typer.Option(
            "--enable-writes/--no-enable-writes",
            help="Offer the write tools (env REPOCONTEXT_ENABLE_WRITES).",
        ),
    ] = None,
    workspace_root: Annotated[
        Path | None,
        typer.Option(help="Repository paths must lie inside it (env REPOCONTEXT_WORKSPACE_ROOT)."),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option(help="Register this repository at start (env REPOCONTEXT_REPO)."),
    ] = None,
    reconcile: Annotated[
        ReconcileChoice | None,
        typer.Option(
            help="Keep indexes fresh: watch, poll or off (env REPOCONTEXT_RECONCILE).",
        ),
    ] = None,
    embedder: Annotated[
        EmbedderChoice | None,
        typer.Option(help="Semantic backend: static, minilm or off (env REPOCONTEXT_EMBEDDER)."),
    ] = None,
    token_encoding: Annotated[
        str | None,
        typer.Option(
            help="o200k_base or cl100k_base, for every token count"
            " (env REPOCONTEXT_TOKEN_ENCODING).",
        ),
    ] = None,
    reconcile_interval: Annotated[
        float | None,
        typer.Option(
            help="Seconds between full reconcile passes"
            " (env REPOCONTEXT_RECONCILE_INTERVAL_SECONDS).",
        ),
    ] = None,
    auth_tokens: Annotated[
        Path | None,
        typer.Option(
            help="JSON file of bearer tokens and their grants; HTTP then needs a token"
            " (env REPOCONTEXT_AUTH_TOKENS_FILE).",
        ),
    ] = None,
    local_role: Annotated[
        RoleChoice | None,
        typer.Option(
            help="Grant of callers without a token: reader or curator"
            " (env REPOCONTEXT_LOCAL_ROLE; default: curator).",
        ),
    ] = None,
    local_repos: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated repository ids the local grant may see, * for all"
            " (env REPOCONTEXT_LOCAL_REPOS).",
        ),
    ] = None,
    allowed_hosts: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated extra Host patterns for /mcp, e.g. repocontext:*"
            " (env REPOCONTEXT_ALLOWED_HOSTS).",
        ),
    ] = None,
    archive_dir: Annotated[
        Path | None,
        typer.Option(help="Memory archive directory (env REPOCONTEXT_ARCHIVE_DIR)."),
    ] = None,
    archive_interval: Annotated[
        float | None,
        typer.Option(
            help="Seconds between archive exports, at least 30"
            " (env REPOCONTEXT_ARCHIVE_INTERVAL_SECONDS).",
        ),
    ] = None,
    archive_restore: Annotated[
        RestoreChoice | None,
        typer.Option(
            help="Restore memory at start: auto (when empty), always or off"
            " (env REPOCONTEXT_ARCHIVE_RESTORE).",
        ),
    ] = None,
    max_file_bytes: Annotated[
        int | None,
        typer.Option(
            help="Larger files are indexed without content (env REPOCONTEXT_MAX_FILE_BYTES)."
        ),
    ] = None,
    feed_max_events: Annotated[
        int | None,
        typer.Option(
            help="Change-feed events the store keeps at most; the sweep trims the oldest"
            " (env REPOCONTEXT_FEED_MAX_EVENTS).",
        ),
    ] = None,
    claim_default_lease: Annotated[
        float | None,
        typer.Option(
            help="Lease seconds of a claim that asks for none"
            " (env REPOCONTEXT_CLAIM_DEFAULT_LEASE_SECONDS).",
        ),
    ] = None,
    claim_max_lease: Annotated[
        float | None,
        typer.Option(
            help="Longest lease in seconds (env REPOCONTEXT_CLAIM_MAX_LEASE_SECONDS).",
        ),
    ] = None,
    access_log: Annotated[
        bool | None,
        typer.Option(
            "--access-log/--no-access-log",
            help="One JSON log line per HTTP request (env REPOCONTEXT_ACCESS_LOG).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="HTTP server processes over the same store and port; 1: one process"
            " (env REPOCONTEXT_WORKERS; default: one per core).",
        ),
    ] = None,
) -> None:
    """Serve the repocontext MCP tools over stdio or streamable HTTP."""
    with _fail_cleanly():
        settings = build_settings(
            transport=transport.value if transport else None,
            host=host,
            port=port,
            data_dir=data_dir,
            store_url=store_url,
            enable_writes=enable_writes,
            workspace_root=workspace_root,
            repo=repo,
            reconcile=reconcile.value if reconcile else None,
            reconcile_interval_seconds=reconcile_interval,
            embedder=embedder.value if embedder else None,
            token_encoding=token_encoding,
            auth_tokens_file=auth_tokens,
            local_role=local_role.value if local_role else None,
            local_repos=local_repos,
            allowed_hosts=allowed_hosts,
            archive_dir=archive_dir,
            archive_interval_seconds=archive_interval,
            archive_restore=archive_restore.value if archive_restore else None,
            max_file_bytes=max_file_bytes,
            feed_max_events=feed_max_events,
            claim_default_lease_seconds=claim_default_lease,
            claim_max_lease_seconds=claim_max_lease,
            access_log=access_log,
            workers=workers,
        )
        # Imported here: the MCP SDK takes over a second to import, which every other
        # command (index, search, status...) would otherwise pay at start.
        from repocontext.server import run

        run(settings, notify=_notify)


@app.command()
def doctor(
    data_dir: DataDirOption = None,
    store_url: StoreUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Print versions, the data directory and store statistics."""
    with _fail_cleanly():
        report = doctor_report(build_settings(data_dir=data_dir, store_url=store_url))
        typer.echo(json.dumps(report, indent=2) if as_json else render_text(report))


register_index_commands(app, build_settings, _fail_cleanly)
register_retrieval_commands(app, build_settings, _fail_cleanly)
register_read_command(app, build_settings, _fail_cleanly)
register_map_command(app, build_settings, _fail_cleanly)
register_memory_commands(app, build_settings, _fail_cleanly)
register_claim_commands(app, build_settings, _fail_cleanly)
register_repo_commands(app, build_settings, _fail_cleanly)
register_archive_commands(app, build_settings, _fail_cleanly)


def _notify(message: str) -> None:
    typer.echo(message, err=True)


def main() -> None:
    """Run the ``repocontext`` command."""
    app()
