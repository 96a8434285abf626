"""Reading a repository's files by path without ever leaving its root through a symlink.

:class:`RootedReader` opens each directory of a path with ``O_NOFOLLOW`` relative to its
parent (kept open while the path-ordered files under it are read), so a directory replaced
by a symlink is not entered; a file that is itself a symlink is followed only to a target
inside the root. Only regular text files within a size cap are returned: binary files (a
NUL byte in the first 8 KiB, the index's rule), larger files, FIFOs and devices are not.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from repocontext.index.files.fingerprint import is_binary
from repocontext.index.files.roots import resolve_path

__all__ = ["RootedReader"]

_OPEN_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class RootedReader:
    """Reads files under a root, one path component at a time, never through a symlink.

    Directories are opened with ``O_NOFOLLOW`` relative to their parent and kept open while
    the (path-ordered) files under them are read, so a directory replaced by a symlink since
    the index saw it is not entered, and a file that is a symlink is followed only to a
    target inside the root.
    """

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._stack: list[tuple[str, int]] = []
        self._root_fd = -1
        self._last: tuple[str, int | None] = ("", None)  # the directory of the last file

    def __enter__(self) -> RootedReader:
        self._root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._last = ("", self._root_fd)
        return self

    def __exit__(self, *exc: object) -> None:
        for _, fd in self._stack:
            os.close(fd)
        self._stack.clear()
        os.close(self._root_fd)

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or ``None`` when it is not to be read (module docstring)."""
        directory, _, name = path.rpartition("/")
        if directory == self._last[0]:
            parent = self._last[1]
        else:
            parent = self._directory(directory.split("/") if directory else [])
            self._last = (directory, parent)
        if parent is None:
            return None
        try:
            fd = os.open(name, _OPEN_FLAGS, dir_fd=parent)
        except OSError as exc:
            return self._through_link(path) if exc.errno == errno.ELOOP else None
        return self._contents(fd)

    def _contents(self, fd: int) -> bytes | None:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > self.max_bytes:
                return None
            data = os.read(fd, info.st_size + 1)  # (a short read of a regular file: its end)
            if len(data) > info.st_size:  # it grew since the stat: read the rest
                data += _rest(fd, self.max_bytes + 1 - len(data))
        except OSError:
            return None
        finally:
            os.close(fd)
        return None if len(data) > self.max_bytes or is_binary(data) else data

    def _through_link(self, path: str) -> bytes | None:
        """A symlinked file: read only when its target is a file inside the root."""
        target = resolve_path(self.root / path)
        if not target.is_relative_to(self.root):
            return None
        try:
            fd = os.open(target, _OPEN_FLAGS)
        except OSError:
            return None
        return self._contents(fd)

    def _directory(self, parts: list[str]) -> int | None:
        """An open descriptor of the directory ``parts`` under the root, or ``None``."""
        kept = 0
        while kept < min(len(parts), len(self._stack)) and self._stack[kept][0] == parts[kept]:
            kept += 1
        while len(self._stack) > kept:
            os.close(self._stack.pop()[1])
        for part in parts[kept:]:
            parent = self._stack[-1][1] if self._stack else self._root_fd
            try:
                fd = os.open(part, _DIRECTORY_FLAGS, dir_fd=parent)
            except OSError:
                return None
            self._stack.append((part, fd))
        return self._stack[-1][1] if self._stack else self._root_fd


def _rest(fd: int, most: int) -> bytes:
    chunks: list[bytes] = []
    while most > 0 and (chunk := os.read(fd, min(most, 1 << 20))):
        chunks.append(chunk)
        most -= len(chunk)
    return b"".join(chunks)
