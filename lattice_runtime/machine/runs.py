"""Run records on disk: ``<repo>/.lattice/runs/<run_id>.json``.

Each write is atomic and refuses symlinked destinations
(:func:`lattice_runtime._files.atomic_write`), so a crash leaves the record of the last
completed transition and a planted link cannot redirect it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from lattice_runtime._files import atomic_write, lattice_dir
from lattice_runtime.errors import LatticeError, UnsafePathError
from lattice_runtime.machine._codec import RecordFormatError, record_from_wire, record_to_wire
from lattice_runtime.machine.record import RUN_ID_PATTERN, RunRecord, check_run_id

__all__ = ["RUNS_DIR", "list_runs", "load_run", "run_path", "save_run"]

RUNS_DIR: Final = "runs"
_SUFFIX: Final = ".json"


def run_path(repo_root: Path, run_id: str) -> Path:
    """Return where the record of ``run_id`` lives (``.lattice/`` is made when missing).

    Raises:
        UnsafePathError: ``run_id`` is not a run id, or ``.lattice`` is not a plain directory.
    """
    return lattice_dir(repo_root) / RUNS_DIR / f"{check_run_id(run_id)}{_SUFFIX}"


def save_run(repo_root: Path, record: RunRecord) -> Path:
    """Write ``record`` atomically and return its path.

    Raises:
        UnsafePathError: The run id is not safe, or the runs directory or the record file is
            a symlink; nothing is written.
    """
    path = run_path(repo_root, record.run_id)
    text = json.dumps(record_to_wire(record), indent=2, sort_keys=True, ensure_ascii=False)
    atomic_write(path, f"{text}\n".encode(), root=repo_root)
    return path


def load_run(repo_root: Path, run_id: str) -> RunRecord:
    """Read the record of ``run_id``.

    Raises:
        UnsafePathError: ``run_id`` is not a run id, or the record is a symlink.
        LatticeError: No record of that run exists, or the file is not a run record.
    """
    path = run_path(repo_root, run_id)
    if path.is_symlink():
        raise UnsafePathError(f"{path} is a symlink; refusing to read through it")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LatticeError(
            f"no run {run_id} in {repo_root}",
            hint="List the runs that exist with list_runs (or `lattice run --json`).",
        ) from None
    return _decode(path, text)


def list_runs(repo_root: Path) -> tuple[RunRecord, ...]:
    """Return every run record of the repository, oldest first (run ids sort by time).

    Files in the runs directory that are not named like a record are ignored.

    Raises:
        UnsafePathError: ``.lattice`` or its runs directory is a symlink.
        LatticeError: A record file cannot be read as a run record.
    """
    runs = lattice_dir(repo_root) / RUNS_DIR
    if runs.is_symlink():
        raise UnsafePathError(f"{runs} is a symlink; refusing to read through it")
    if not runs.is_dir():
        return ()
    ids = sorted(
        path.name.removesuffix(_SUFFIX)
        for path in runs.iterdir()
        if path.name.endswith(_SUFFIX) and RUN_ID_PATTERN.fullmatch(path.name.removesuffix(_SUFFIX))
    )
    return tuple(load_run(repo_root, run_id) for run_id in ids)


def _decode(path: Path, text: str) -> RunRecord:
    try:
        record = record_from_wire(json.loads(text))
    except (json.JSONDecodeError, RecordFormatError) as exc:
        raise LatticeError(
            f"{path} is not a run record: {exc}",
            hint="The file was edited or written by another version; move it aside.",
        ) from None
    if path.name != f"{record.run_id}{_SUFFIX}":
        raise LatticeError(f"{path} holds the record of another run ({record.run_id})")
    return record
