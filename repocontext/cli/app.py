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

from repocontext.cli._claims import register as register_claim_commands
from repocontext.cli._doctor import doctor_report, render_text
from repocontext.cli._index import register as register_index_commands
from repocontext.cli._memory import register as register_memory_commands
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


class ReconcileChoice(enum.StrEnum):
    """The ``--reconcile`` values."""

    watch = "watch"
    poll = "poll"
    off = "off"


DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Store directory (env REPOCONTEXT_DATA_DIR)."),
]


@contextmanager
def _fail_cleanly() -> Iterator[None]:
    # The CLI's top level: a known failure becomes one line on stderr and exit code 1.
    try:
        yield
    except RepoContextError as exc:
        typer.echo(f"error [{exc.code}]: {exc.message}\nhint: {exc.hint}", err=True)
        raise typer.Exit(1) from exc
    except ValidationError as exc:
        typer.echo(f"error [input.invalid]: {exc}", err=True)
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
) -> None:
    """Serve the repocontext MCP tools over stdio or streamable HTTP."""
    with _fail_cleanly():
        settings = build_settings(
            transport=transport.value if transport else None,
            host=host,
            port=port,
            data_dir=data_dir,
            enable_writes=enable_writes,
            workspace_root=workspace_root,
            repo=repo,
            reconcile=reconcile.value if reconcile else None,
            reconcile_interval_seconds=reconcile_interval,
            embedder=embedder.value if embedder else None,
            token_encoding=token_encoding,
        )
        # Imported here: the MCP SDK takes over a second to import, which every other
        # command (index, search, status...) would otherwise pay at start.
        from repocontext.server import run

        run(settings, notify=_notify)


@app.command()
def doctor(
    data_dir: DataDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Print versions, the data directory and store statistics."""
    with _fail_cleanly():
        report = doctor_report(build_settings(data_dir=data_dir))
        typer.echo(json.dumps(report, indent=2) if as_json else render_text(report))


register_index_commands(app, build_settings, _fail_cleanly)
register_retrieval_commands(app, build_settings, _fail_cleanly)
register_memory_commands(app, build_settings, _fail_cleanly)
register_claim_commands(app, build_settings, _fail_cleanly)


def _notify(message: str) -> None:
    typer.echo(message, err=True)


def main() -> None:
    """Run the ``repocontext`` command."""
    app()
