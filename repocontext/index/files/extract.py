"""Per-file extraction: read, fingerprint, classify and parse one file.

:func:`extract_file` is a plain function over picklable values so the job can run it in worker
processes (tree-sitter's parse holds the GIL, so only processes use both cores).
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from repocontext.errors import RepoContextError
from repocontext.index.files.fingerprint import BINARY_PROBE_BYTES, git_blob_id, is_binary
from repocontext.index.files.walk import WalkEntry
from repocontext.index.model import FileOutline, pickled_by_fields
from repocontext.index.parsing.languages import (
    content_language,
    is_config_path,
    is_test_path,
    language_for,
)
from repocontext.index.parsing.manifests import MANIFESTS, manifest_name
from repocontext.index.parsing.parser import parse_outline
from repocontext.tokens import DEFAULT_ENCODING, count_tokens

__all__ = [
    "CHUNK",
    "PARALLEL_THRESHOLD",
    "Extracted",
    "extract_all",
    "extract_file",
    "extract_many",
    "worker_started",
]

CHUNK: Final = 48
IN_FLIGHT_PER_WORKER: Final = 3
PARALLEL_THRESHOLD: Final = 96
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Extracted:
    """What one file yielded.

    Attributes:
        entry: The walk entry (stat tuple) it came from.
        blob_id: Git blob id of the bytes read, or ``None`` when unreadable.
        language: Language id, or ``None`` for unknown languages.
        binary: NUL byte in the first 8 KiB (no content, no outline).
        is_test: Looks like a test file.
        is_config: Looks like a configuration file.
        text: Decoded content (``None`` for binary, oversized or unreadable files).
        undecodable: The bytes were not valid UTF-8 (text holds replacement characters).
        outline: The parsed outline, for known languages.
        token_count: Exact BPE tokens of ``text`` (0 without text).
        issue: Why the file could not be read or parsed, if it could not.
        manifest: The package name a ``package.json`` or ``Cargo.toml`` declares.
    """

    entry: WalkEntry
    blob_id: str | None
    language: str | None
    binary: bool = False
    is_test: bool = False
    is_config: bool = False
    text: str | None = None
    undecodable: bool = False
    outline: FileOutline | None = None
    token_count: int = 0
    issue: str | None = None
    manifest: str | None = None


def extract_file(
    root: str, entry: WalkEntry, encoding: str = DEFAULT_ENCODING, *, skip_binary: bool = False
) -> Extracted:
    """Read and parse one file; failures are reported in ``issue``, never raised.

    ``skip_binary``: a binary file will be dropped (the walk options exclude binaries), so
    only its first 8 KiB are read, to tell, and it gets no blob id.
    """
    path = entry.path
    language = language_for(path)
    is_test, is_config = is_test_path(path), is_config_path(path)

    def found(entry: WalkEntry, blob: str | None, **fields: Any) -> Extracted:
        return Extracted(entry, blob, language, is_test=is_test, is_config=is_config, **fields)

    try:
        with open(Path(root) / path, "rb") as handle:
            head = handle.read(BINARY_PROBE_BYTES)
            binary = is_binary(head)
            if skip_binary and binary:
                return found(entry, None, binary=True)
            data = head + handle.read()
    except FileNotFoundError:
        return found(entry, None, issue="vanished")
    except OSError as exc:
        return found(entry, None, issue=f"unreadable: {exc.strerror}")
    blob = git_blob_id(data)
    if entry.oversized or len(data) != entry.size:
        entry = WalkEntry(path, len(data), entry.mtime_ns, entry.inode, entry.oversized)
    if binary:
        return found(entry, blob, binary=True)
    if entry.oversized:
        return found(entry, blob)
    language = content_language(path, data)  # (a C++ header: `.h` is both languages')
    try:
        text, undecodable = data.decode("utf-8"), False
    except UnicodeDecodeError:
        text, undecodable = data.decode("utf-8", errors="replace"), True
    outline: FileOutline | None = None
    issue: str | None = None
    if language is not None:
        try:
            outline = parse_outline(language, data, path)
        except RepoContextError as exc:
            issue = f"parse failed: {exc.message}"
    return found(
        entry,
        blob,
        text=text,
        undecodable=undecodable,
        outline=outline,
        token_count=count_tokens(text, encoding),
        issue=issue,
        manifest=manifest_name(path, text) if path.endswith(MANIFESTS) else None,
    )


def extract_many(
    root: str,
    entries: list[WalkEntry],
    encoding: str = DEFAULT_ENCODING,
    *,
    skip_binary: bool = False,
) -> list[Extracted]:
    """Extract a chunk of files (the unit of work sent to a worker process)."""
    return [extract_file(root, entry, encoding, skip_binary=skip_binary) for entry in entries]


def extract_all(
    root: Path,
    entries: list[WalkEntry],
    encoding: str,
    workers: int,
    *,
    skip_binary: bool = False,
) -> Iterator[Extracted]:
    """Extract ``entries`` in order, in ``workers`` parser processes when there are many.

    Chunks of :data:`CHUNK` files go to the workers, at most :data:`IN_FLIGHT_PER_WORKER`
    per worker at a time; fewer than :data:`PARALLEL_THRESHOLD` files (or one worker) are
    extracted in this process.
    """
    chunks = [entries[i : i + CHUNK] for i in range(0, len(entries), CHUNK)]
    here, skip = str(root), skip_binary
    if len(entries) < PARALLEL_THRESHOLD or workers < 2:
        for chunk in chunks:
            yield from extract_many(here, chunk, encoding, skip_binary=skip)
        return
    # (spawn: never fork a process that holds an LMDB environment)
    context = multiprocessing.get_context("spawn")
    window = workers * IN_FLIGHT_PER_WORKER
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=worker_started
    ) as pool:
        # A bounded window of chunks in flight: results carry whole file texts, so
        # submitting everything at once would hold the repository in memory.
        pending: deque[Future[list[Extracted]]] = deque()
        for chunk in chunks:
            job = pool.submit(extract_many, here, chunk, encoding, skip_binary=skip)
            pending.append(job)
            if len(pending) >= window:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def worker_started() -> None:
    """Set up a parser process: no cyclic garbage collection, and it dies with its parent.

    What a worker allocates per file (syntax nodes, the outline, the text) is freed by
    reference counting as soon as the file's result is sent; the collector would only
    walk it, for about 3 % of the worker's time. On Linux the kernel sends the worker
    SIGTERM when the process that started it dies (``PR_SET_PDEATHSIG``), so a server or
    ``repocontext index`` killed with SIGKILL mid-parse leaves no parser behind.
    """
    gc.disable()
    if sys.platform == "linux":
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):  # no usable libc: the worker outlives a crash
            return
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:  # it died before the request
            os._exit(1)
