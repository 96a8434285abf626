"""The ``lattice`` command: a thin layer over the runtime (``docs/lattice.md``, "CLI").

Each command parses its flags, calls the library and prints; a :class:`LatticeError` becomes
one ``error [code]: message`` line and a ``hint:`` line on stderr with exit code 2. A run that
ends ``FAILED`` or ``CANCELLED`` exits 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from lattice_runtime.errors import ConfigError, LatticeError
from lattice_runtime.settings import LatticeSettings

__all__ = [
    "EmbedderOption",
    "RepoOption",
    "app",
    "build_settings",
    "echo_json",
    "fail_cleanly",
    "main",
]

app = typer.Typer(
    name="lattice",
    help="Deterministic execution layer for coding agents, on top of repocontext.",
    no_args_is_help=True,
    add_completion=False,
)

RepoOption = Annotated[
    Path,
    typer.Option("--repo", help="The repository's top directory (default: the current one)."),
]

EmbedderOption = Annotated[
    str | None,
    typer.Option(
        help="How the kernel ranks: static (hybrid), minilm, off (env LATTICE_EMBEDDER).",
    ),
]


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


@contextmanager
def fail_cleanly() -> Iterator[None]:
    """Turn a runtime error into two lines on stderr and exit code 2 (the CLI's top level)."""
    try:
        yield
    except LatticeError as exc:
        typer.echo(f"error [{exc.code}]: {exc.message}\nhint: {exc.hint}", err=True)
        raise typer.Exit(2) from exc


def build_settings(**flags: object) -> LatticeSettings:
    """Settings from ``LATTICE_*`` variables, overridden by the flags given (``None``: not).

    Raises:
        ConfigError: A variable or flag has an invalid value.
    """
    given = {name: value for name, value in flags.items() if value is not None}
    try:
        return LatticeSettings(**given)  # type: ignore[arg-type]  # pydantic checks each value
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        raise ConfigError(
            f"invalid setting: {problems}",
            hint="Check the flag or its LATTICE_* variable (docs/lattice.md, Configuration).",
        ) from None


def echo_json(value: object) -> None:
    """Print ``value`` as indented JSON."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


def main() -> None:
    """Run the ``lattice`` command."""
    app()
