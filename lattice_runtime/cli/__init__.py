"""The ``lattice`` command (a placeholder until the runtime's commands arrive)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import typer

__all__ = ["app", "main"]

app = typer.Typer(
    name="lattice",
    help="Deterministic execution layer for coding agents, on top of repocontext.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """Deterministic execution layer for coding agents, on top of repocontext."""


@app.command("version")
def show_version() -> None:
    """Print the installed version."""
    try:
        typer.echo(version("repocontext-lattice"))
    except PackageNotFoundError:  # a source tree that was never installed
        typer.echo("0+unknown")


def main() -> None:
    """Run the ``lattice`` command."""
    app()
