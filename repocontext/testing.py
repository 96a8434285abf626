"""Test helpers shared by the test suite, the benchmarks and downstream consumers' tests.

Deterministic stand-ins for injected effects (the clock), real git repositories for a test to
index, and what it takes to talk to a real server process (a free port, waiting until it is
live). Nothing in this module replaces a real part of ``repocontext``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = [
    "FakeClock",
    "free_port",
    "make_repo",
    "start_http_server",
    "tool_error",
    "tool_ok",
    "wait_live",
]


def tool_ok(result: Any) -> dict[str, Any]:
    """Return the structured content of a successful MCP tool result (an ``mcp`` result).

    Raises:
        AssertionError: The call failed or returned no structured content.
    """
    if result.is_error or not isinstance(result.structured_content, dict):
        raise AssertionError(f"the tool call failed: {result.content}")
    return result.structured_content


def tool_error(result: Any) -> dict[str, Any]:
    """Return the ``{code, message, hint}`` body of a failed MCP tool result.

    Raises:
        AssertionError: The call succeeded, or its error is not one JSON text block.
    """
    blocks = list(result.content)
    if not result.is_error or len(blocks) != 1 or not isinstance(blocks[0].text, str):
        raise AssertionError(f"expected one tool error text block, got {result}")
    body: dict[str, Any] = json.loads(blocks[0].text)
    return body


def start_http_server(
    data_dir: Path,
    workspace_root: Path,
    *,
    writes: bool = True,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    stderr: Path | None = None,
    workers: int = 1,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``repocontext serve --transport http`` on a free port; return it and its base URL.

    Embedding and reconciling are off unless ``env`` says otherwise; the call returns once
    ``/health/live`` answers. One server process unless ``workers`` says otherwise (the
    ``serve`` default is one per core).

    Args:
        data_dir: The store directory.
        workspace_root: ``--workspace-root``.
        writes: Pass ``--enable-writes``.
        extra_args: More ``serve`` flags.
        env: Environment variables set on top of this process's.
        stderr: A file that receives the server's stderr (access log, banner).
        workers: ``--workers``.

    Raises:
        RuntimeError: The server did not become live (it is killed).
    """
    port = free_port()
    cli = str(Path(sys.executable).parent / "repocontext")
    args = [cli, "serve", "--transport", "http", "--port", str(port), "--data-dir", str(data_dir)]
    args += ["--workspace-root", str(workspace_root), *(["--enable-writes"] if writes else [])]
    args += ["--workers", str(workers)]
    args += list(extra_args)
    environ = {
        **os.environ,
        "REPOCONTEXT_EMBEDDER": "off",
        "REPOCONTEXT_RECONCILE": "off",
        **(env or {}),
    }
    err = stderr.open("wb") if stderr is not None else subprocess.DEVNULL
    try:
        server = subprocess.Popen(args, env=environ, stdout=subprocess.DEVNULL, stderr=err)
    finally:
        if stderr is not None:
            err.close()  # type: ignore[union-attr]
    base = f"http://127.0.0.1:{port}"
    try:
        wait_live(base, server)
    except RuntimeError:
        server.kill()
        raise
    return server, base


_TEST_AUTHOR: Final = ("-c", "user.name=repocontext tests", "-c", "user.email=tests@example.com")
"""The author of a test repository's commit (the machine's git identity may be unset)."""


def make_repo(root: Path, files: Mapping[str, str | bytes], *, commit: bool = False) -> Path:
    """Make a real git repository at ``root`` holding ``files``.

    Args:
        root: The work tree; it and its parents are created when missing.
        files: Repository-relative path -> its text (written as UTF-8) or bytes.
        commit: Also commit every file on branch ``main``; without, they stay untracked,
            which git lists all the same (``ls-files -co``), as a work tree in progress.

    Returns:
        ``root``.

    Raises:
        subprocess.CalledProcessError: A git command failed.
    """
    root.mkdir(parents=True, exist_ok=True)
    for rel, body in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            target.write_bytes(body)
        else:
            target.write_text(body, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    if commit:
        _git(root, *_TEST_AUTHOR, "add", "-A")
        _git(root, *_TEST_AUTHOR, "commit", "-q", "-m", "test repository")
    return root


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_live(base_url: str, server: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Wait until ``base_url``/health/live answers 200.

    Raises:
        RuntimeError: The server exited, or did not become live in ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/health/live", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{base_url} did not become live in {timeout:.0f} s")


class FakeClock:
    """A manually advanced wall clock, safe to share between threads."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        """Start at ``start`` seconds since the epoch."""
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        """Return the current fake time."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (never backwards) and return the new time.

        Raises:
            ValueError: ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError("a FakeClock only moves forward")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, when: float) -> None:
        """Jump to ``when`` (may move backwards, to exercise clock skew)."""
        with self._lock:
            self._now = when
