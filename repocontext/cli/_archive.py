"""Archive commands: ``repocontext archive export|restore|status``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from repocontext.cli._index import DataDir, JsonOption, StoreUrl, emit
from repocontext.errors import InvalidInputError
from repocontext.memory import ARCHIVE_NAME, MemoryArchiver
from repocontext.settings import Settings
from repocontext.workspace import Workspace

__all__ = ["register"]

ArchiveDirOption = Annotated[
    Path | None,
    typer.Option("--archive-dir", help="Archive directory (env REPOCONTEXT_ARCHIVE_DIR)."),
]


def register(app: typer.Typer, settings_for: Any, fail_cleanly: Any) -> None:
    """Add the ``archive`` command group to ``app``."""
    archive = typer.Typer(help="The memory archive: export, restore, status.", no_args_is_help=True)
    app.add_typer(archive, name="archive")

    @archive.command()
    def export(
        out: Annotated[
            Path | None,
            typer.Option("--out", help=f"Archive file; default: <archive dir>/{ARCHIVE_NAME}."),
        ] = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Write every memory record to the archive now (the old file is kept as .prev)."""
        with fail_cleanly():
            settings: Settings = settings_for(data_dir=data_dir, store_url=store_url)
            path = out if out is not None else _archive_path(settings)
            with Workspace.open(settings) as workspace:
                report = MemoryArchiver(workspace.store, path).export_now()
            emit(report, as_json, _export_text)

    @archive.command()
    def restore(
        file: Annotated[Path, typer.Argument(help="An archive file (e.g. memory.rcarch.prev).")],
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Merge an archive into the store (a second merge of the same file changes nothing)."""
        with fail_cleanly():
            settings: Settings = settings_for(data_dir=data_dir, store_url=store_url)
            home = settings.archive_dir / ARCHIVE_NAME if settings.archive_dir else file
            with Workspace.open(settings) as workspace:
                report = MemoryArchiver(workspace.store, home).merge(file)
            emit(report, as_json, _restore_text)

    @archive.command()
    def status(
        archive_dir: ArchiveDirOption = None,
        data_dir: DataDir = None,
        store_url: StoreUrl = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show the archive file, its records and age, and whether memory changed since."""
        with fail_cleanly():
            settings: Settings = settings_for(
                data_dir=data_dir, store_url=store_url, archive_dir=archive_dir
            )
            with Workspace.open(settings) as workspace:
                report = MemoryArchiver(workspace.store, _archive_path(settings)).status()
            emit(report, as_json, _status_text)


def _archive_path(settings: Settings) -> Path:
    if settings.archive_dir is None:
        raise InvalidInputError(
            "no archive directory is configured",
            hint="Pass --archive-dir (status) or --out (export), or set REPOCONTEXT_ARCHIVE_DIR.",
        )
    return settings.archive_dir / ARCHIVE_NAME


def _export_text(report: dict[str, Any]) -> str:
    return f"exported {report['records']} memory records to {report['path']}"


def _restore_text(report: dict[str, Any]) -> str:
    return f"merged {report['path']}: {report['records']} records, {report['changed']} changed" + (
        " (memory was empty)" if report["into_empty"] else ""
    )


def _status_text(report: dict[str, Any]) -> str:
    if not report["exists"]:
        head = f"{report['path']}: no archive yet"
    else:
        head = (
            f"{report['path']}: {report['records']} records, "
            f"written {report['age_seconds']:.0f} s ago"
        )
    lines = [
        head,
        f"  previous snapshot: {'yes' if report['previous_exists'] else 'no'}",
        f"  live memory entries in the store: {report['memory_records']}",
        f"  changed since the last export: {'yes' if report['pending'] else 'no'}",
    ]
    return "\n".join(lines)
