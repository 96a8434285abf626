"""Which files of a repository get indexed: git's view where there is one, else .gitignore rules.

* In a git work tree the file list is ``git ls-files -co --exclude-standard -z`` (tracked plus
  untracked-but-not-ignored; ``--exclude-standard`` is dropped when ignore rules are off).
* Elsewhere the tree is walked and every ``.gitignore`` on the way applies below its directory
  (gitignore semantics from :mod:`pathspec`).
* ``.git`` is always skipped; include/exclude globs (gitwildmatch patterns) filter the list.
* A root inside a git work tree (a subdirectory of a repository) gets git's view too, unless
  the repository's rules ignore the root itself (then its files are walked).
* A symlink is followed only when it resolves to a file inside the root; one that leaves the
  root, dangles, loops or points at a directory is reported as an issue and skipped.
* Files that vanish or cannot be stat-ed, directories that cannot be listed and names that
  are not valid UTF-8 are reported, never fatal. A file git lists that is missing from the
  work tree (deleted, not yet committed) is simply absent.

The walk only stats files; reading them (digests, binary detection, parsing) is the job's.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pathspec

from repocontext.errors import InvalidInputError, InvalidKeyError
from repocontext.index.files.roots import check_root, is_utf8, printable_path
from repocontext.index.model import pickled_by_fields
from repocontext.store import Value
from repocontext.store.keys import content_key, file_key

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "WalkEntry",
    "WalkIssue",
    "WalkOptions",
    "WalkResult",
    "in_scope",
    "is_git_worktree",
    "keyable",
    "keyable_entries",
    "path_filter",
    "walk",
]

DEFAULT_MAX_FILE_BYTES: Final = 1_000_000
_GIT_UNREADABLE: Final = re.compile(r"warning: could not open directory '([^'\n]*)': ([^\n]*)")
_GIT_TIMEOUT: Final = 120
# pathspec's own regular expressions (Python's re), whatever else is installed: its "best"
# backend would be RE2 when google-re2 is (grep's engine), which refuses the surrogate-escaped
# names of files whose name is not UTF-8 instead of matching them.
_PATTERNS: Final = "simple"


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """Filters of a walk.

    Attributes:
        include_globs: When given, only paths matching one of them are kept.
        exclude_globs: Paths matching one of them are dropped.
        respect_gitignore: Honour .gitignore files (and git's exclude rules).
        exclude_binary: Skip binary files (NUL in the first 8 KiB) entirely; otherwise they
            become nodes without content.
        max_file_bytes: Files larger than this become nodes without content.
    """

    include_globs: tuple[str, ...] = ()
    exclude_globs: tuple[str, ...] = ()
    respect_gitignore: bool = True
    exclude_binary: bool = True
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def check(self) -> WalkOptions:
        """Return these options after checking every glob is one git would use.

        A glob git ignores (an unclosed ``[``, a lone ``!`` or a lone backslash) would match
        nothing, silently: an include list of it would empty the index.

        Raises:
            InvalidInputError: A glob is malformed or matches nothing by construction.
        """
        for glob in (*self.include_globs, *self.exclude_globs):
            try:
                patterns = pathspec.GitIgnoreSpec.from_lines([glob], backend=_PATTERNS).patterns
            except ValueError as exc:  # pathspec's GitIgnorePatternError
                patterns, reason = [], str(exc)
            else:
                reason = "it can never match"
            if not glob.strip() or glob.startswith("#") or not any(p.regex for p in patterns):
                raise InvalidInputError(
                    f"glob {glob[:100]!r} is not usable: {reason}",
                    hint="Use gitignore-style globs such as 'src/**' or '*.py' (a '[' needs "
                    "its ']'; escape a literal one as '\\[').",
                )
        return self

    def to_wire(self) -> dict[str, Value]:
        """Return the form kept in the repository record (``filters``)."""
        return {
            "includeGlobs": list(self.include_globs),
            "excludeGlobs": list(self.exclude_globs),
            "respectGitignore": self.respect_gitignore,
            "excludeBinary": self.exclude_binary,
            "maxFileBytes": self.max_file_bytes,
        }

    @classmethod
    def from_wire(cls, wire: object) -> WalkOptions:
        """Invert :meth:`to_wire` (defaults for anything missing)."""
        if not isinstance(wire, dict):
            return cls()
        return cls(
            include_globs=tuple(str(g) for g in wire.get("includeGlobs") or ()),
            exclude_globs=tuple(str(g) for g in wire.get("excludeGlobs") or ()),
            respect_gitignore=bool(wire.get("respectGitignore", True)),
            exclude_binary=bool(wire.get("excludeBinary", True)),
            max_file_bytes=int(wire.get("maxFileBytes") or DEFAULT_MAX_FILE_BYTES),
        )


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class WalkEntry:
    """One file to index.

    Attributes:
        path: Repository-relative posix path.
        size: Bytes.
        mtime_ns: Modification time in nanoseconds.
        inode: Inode number (0 where the platform has none).
        oversized: Larger than the size cap: recorded without content.
    """

    path: str
    size: int
    mtime_ns: int
    inode: int
    oversized: bool = False


@dataclass(frozen=True, slots=True)
class WalkIssue:
    """A path the walk skipped, and why (``vanished``, ``unreadable``, ``symlink_outside``...)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class WalkResult:
    """Files to index, in path order, and the paths skipped with a reason."""

    entries: list[WalkEntry]
    issues: list[WalkIssue] = field(default_factory=list)
    git: bool = False

    def unreadable(self, path: str) -> bool:
        """``path``, or a directory holding it, could not be read by this walk.

        Its stored node must be kept, not removed: the file may well be there (a directory
        made unreadable hides its files from the listing, as a file's own mode hides it).
        """
        for issue in self.issues:
            if issue.reason.startswith("unreadable"):
                where = issue.path
                if where in ("", ".") or path == where or path.startswith(where + "/"):
                    return True
        return False


def is_git_worktree(root: Path) -> bool:
    """Return True when git lists the files of ``root``.

    That is, ``root`` is the top of a git work tree or a directory inside one that the
    repository's ignore rules do not ignore (``git ls-files`` lists nothing under an ignored
    directory, so one is walked instead).
    """
    out = _git(root, "rev-parse", "--show-toplevel", "--show-prefix")
    if out is None:
        return False
    top, _, prefix = out.partition("\n")
    prefix = prefix.strip("\n")
    if not prefix:
        return Path(top).resolve() == root.resolve()
    return _git(Path(top), "check-ignore", "-q", "--", prefix) is None


def _git_refusal(root: Path) -> str | None:
    """Why git refuses to work in ``root`` although it holds a ``.git``, if it does.

    Git refuses a repository owned by another user (``safe.directory``). The walk then
    honours the ``.gitignore`` files without git, which may differ from git's listing
    (force-added files, ``.git/info/exclude``), so the run says so in its issues.
    """
    out = _run_git(root, "rev-parse", "--show-toplevel")
    if out is None or out.returncode == 0 or "dubious ownership" not in out.stderr:
        return None
    return (
        "git_refused: git refuses this repository (dubious ownership: another user owns it), "
        "so its directory was walked with the .gitignore files instead; to index git's "
        f"listing, run: git config --global --add safe.directory {root}"
    )


def _git(cwd: Path, *args: str) -> str | None:
    """Run a git command in ``cwd``: its output, or ``None`` when it fails."""
    out = _run_git(cwd, *args)
    return out.stdout if out is not None and out.returncode == 0 else None


def _run_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """Run a git command in ``cwd`` (``None``: git could not be run at all)."""
    try:
        return subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def path_filter(globs: Sequence[str]) -> Callable[[str], bool]:
    """A test of repository paths: true for a path matching one of ``globs`` (gitignore style).

    The same matching as the include globs of a walk (``*.py`` at any depth, ``src/**``).

    Raises:
        InvalidInputError: A glob is malformed or matches nothing by construction.
    """
    options = WalkOptions(include_globs=tuple(globs)).check()
    return _filter(options)


def walk(
    root: Path, options: WalkOptions | None = None, *, scope: Sequence[str] | None = None
) -> WalkResult:
    """List the files of ``root`` to index.

    Args:
        root: The repository root.
        options: Filters.
        scope: Restrict the walk to these repository-relative prefixes: ``"dir/"`` for a
            directory, ``"a/b.py"`` for exactly one file, ``""`` for everything (as made by
            :func:`repocontext.index.drift.scope_prefix`). ``None`` walks everything.

    Raises:
        PathNotFoundError: The root is not an existing directory.
        DangerousRootError: The root is the filesystem root or the home directory.
    """
    options = options or WalkOptions()
    root = check_root(root)
    git = is_git_worktree(root)
    prefixes = None if scope is None or "" in scope else sorted(set(scope))
    issues: list[WalkIssue] = []
    if not git and (root / ".git").exists():
        refusal = _git_refusal(root)
        if refusal is not None:  # walked as a plain directory: its files may differ
            issues.append(WalkIssue(".", refusal))
    if git:
        candidates = _git_files(root, options, prefixes, issues)
    elif prefixes is None:
        candidates = _walk_files(root, options, issues)
    else:
        candidates = [
            rel for prefix in prefixes for rel in _walk_prefix(root, options, prefix, issues)
        ]
    keep, scoped = _filter(options), _scope_test(prefixes)
    entries: list[WalkEntry] = []
    for rel in sorted(set(candidates)):
        if not keep(rel) or not scoped(rel):
            continue
        if not is_utf8(rel):
            issues.append(WalkIssue(printable_path(rel), "undecodable_name"))
            continue
        entry = _stat_entry(root, rel, options, issues, listed_by_git=git)
        if entry is not None:
            entries.append(entry)
    return WalkResult(entries, issues, git)


def keyable_entries(result: WalkResult, repo_id: str) -> WalkResult:
    """``result`` without the files whose path no store key can hold.

    Control characters, or a path too long for ``repo_id``'s keys: each such file becomes an
    ``invalid_path`` issue.
    """
    entries, issues = [], list(result.issues)
    for entry in result.entries:
        if keyable(repo_id, entry.path):
            entries.append(entry)
        else:
            issues.append(WalkIssue(entry.path, "invalid_path"))
    return WalkResult(entries, issues, result.git)


def keyable(repo_id: str, path: str) -> bool:
    """Whether the keys of ``path``'s file node and content can hold it."""
    try:
        file_key(repo_id, path)
        content_key(repo_id, path)
    except InvalidKeyError:
        return False
    return True


def _scope_test(prefixes: Sequence[str] | None) -> Callable[[str], bool]:
    """:func:`in_scope` for many paths: exact file paths by set membership, not one by one."""
    if prefixes is None or "" in prefixes:
        return lambda path: True
    files = frozenset(p for p in prefixes if not p.endswith("/"))
    directories = tuple(p for p in prefixes if p.endswith("/"))
    return lambda path: path in files or path.startswith(directories)


def in_scope(path: str, prefixes: Sequence[str] | None) -> bool:
    """Return True when ``path`` is inside one of the scope ``prefixes`` (``None``: all)."""
    if prefixes is None:
        return True
    return any(path == p or (p.endswith("/") and path.startswith(p)) or not p for p in prefixes)


def _git_files(
    root: Path, options: WalkOptions, prefixes: Sequence[str] | None, issues: list[WalkIssue]
) -> list[str]:
    args = ["git", "--literal-pathspecs", "-C", str(root), "ls-files", "-co", "-z"]
    if options.respect_gitignore:
        args.append("--exclude-standard")
    if prefixes is not None:
        args += ["--", *prefixes]
    out = subprocess.run(args, capture_output=True, timeout=_GIT_TIMEOUT, check=False)
    if out.returncode != 0:
        if prefixes is None:
            return _walk_files(root, options, issues)
        return [rel for prefix in prefixes for rel in _walk_prefix(root, options, prefix, issues)]
    # git lists what it can and only warns about a directory it cannot open: its untracked
    # files are unknown this time (kept, not removed: see WalkResult.unreadable)
    warnings = _GIT_UNREADABLE.finditer(out.stderr.decode("utf-8", "surrogateescape"))
    issues.extend(
        WalkIssue(printable_path(w[1].rstrip("/")), f"unreadable: {w[2]}") for w in warnings
    )
    names = out.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [n for n in names if n and not _in_git_dir(n)]


def _walk_prefix(
    root: Path, options: WalkOptions, prefix: str, issues: list[WalkIssue]
) -> list[str]:
    """The files under one scope prefix, with the .gitignore files above it applied.

    Nothing under a symlinked directory: the whole walk does not descend into one (it lists
    the link itself, which the stat step reports), and neither does a scope through it.
    """
    parts = prefix.rstrip("/").split("/")
    directories = parts if prefix.endswith("/") else parts[:-1]
    if any(os.path.islink(root.joinpath(*directories[: i + 1])) for i in range(len(directories))):
        return []
    specs: dict[str, pathspec.GitIgnoreSpec] = {}
    for depth in range(len(parts)):  # the directories above the prefix, root first
        rel_dir = "/".join(parts[:depth])
        if options.respect_gitignore:
            _load_gitignore(root / rel_dir, rel_dir, specs)
        below = "/".join(parts[: depth + 1])
        if depth < len(parts) - 1 and _ignored(below + "/", specs):
            return []
    if not prefix.endswith("/"):
        return [] if _ignored(prefix, specs) or not os.path.lexists(root / prefix) else [prefix]
    if _ignored(prefix, specs):
        return []
    return _walk_files(root, options, issues, start=prefix.rstrip("/"), specs=specs)


def _walk_files(
    root: Path,
    options: WalkOptions,
    issues: list[WalkIssue],
    *,
    start: str = "",
    specs: dict[str, pathspec.GitIgnoreSpec] | None = None,
) -> list[str]:
    found: list[str] = []
    specs = {} if specs is None else specs

    def unlisted(error: OSError) -> None:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return  # (a scope directory that is gone, or a file now: nothing to list)
        where = Path(error.filename or root).relative_to(root).as_posix()
        issues.append(WalkIssue(printable_path(where), f"unreadable: {error.strerror}"))

    for dirpath, dirnames, filenames in os.walk(root / start, onerror=unlisted, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if options.respect_gitignore:
            _load_gitignore(Path(dirpath), rel_dir, specs)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d != ".git" and not _ignored(f"{rel_dir}/{d}".lstrip("/") + "/", specs)
        )
        # A symlink to a directory is not descended into: it goes to the stat step, which
        # reports it (as git's listing does), instead of vanishing from the walk.
        linked = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        if linked:
            dirnames[:] = [d for d in dirnames if d not in linked]
            found.extend(f"{rel_dir}/{d}".lstrip("/") for d in linked)
        found.extend(
            rel for name in filenames if not _ignored(rel := f"{rel_dir}/{name}".lstrip("/"), specs)
        )
    return found


def _load_gitignore(
    directory: Path, rel_dir: str, specs: dict[str, pathspec.GitIgnoreSpec]
) -> None:
    ignore = directory / ".gitignore"
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines, backend=_PATTERNS)


def _ignored(rel: str, specs: dict[str, pathspec.GitIgnoreSpec]) -> bool:
    # Specs are visited from the root down (os.walk order), so a deeper .gitignore, like
    # git's, overrides a shallower one, negations ("!keep.tmp") included.
    ignored = False
    for base, spec in specs.items():
        if base and not rel.startswith(base + "/"):
            continue
        decision = spec.check_file(rel[len(base) + 1 :] if base else rel).include
        if decision is not None:
            ignored = decision
    return ignored


def _filter(options: WalkOptions) -> _Keep:
    include = pathspec.GitIgnoreSpec.from_lines(options.include_globs, backend=_PATTERNS)
    exclude = pathspec.GitIgnoreSpec.from_lines(options.exclude_globs, backend=_PATTERNS)
    return _Keep(include if options.include_globs else None, exclude)


@dataclass(frozen=True, slots=True)
class _Keep:
    include: pathspec.GitIgnoreSpec | None
    exclude: pathspec.GitIgnoreSpec

    def __call__(self, rel: str) -> bool:
        if _in_git_dir(rel):
            return False
        if self.include is not None and not self.include.match_file(rel):
            return False
        return not self.exclude.match_file(rel)


def _in_git_dir(rel: str) -> bool:
    return rel == ".git" or rel.startswith(".git/") or "/.git/" in rel


def _stat_entry(
    root: Path, rel: str, options: WalkOptions, issues: list[WalkIssue], *, listed_by_git: bool
) -> WalkEntry | None:
    full = root / rel
    try:
        info = full.lstat()
    except FileNotFoundError:
        if not listed_by_git:  # git also lists tracked files deleted from the work tree
            issues.append(WalkIssue(rel, "vanished"))
        return None
    except OSError as exc:
        issues.append(WalkIssue(rel, f"unreadable: {exc.strerror}"))
        return None
    try:
        if stat.S_ISLNK(info.st_mode):
            target = full.resolve()
            if not target.is_relative_to(root):
                issues.append(WalkIssue(rel, "symlink_outside"))
                return None
            info = target.stat()
        if not stat.S_ISREG(info.st_mode):
            issues.append(WalkIssue(rel, "not_a_file"))
            return None
    except RuntimeError:  # Path.resolve of a symlink loop (Python 3.11)
        issues.append(WalkIssue(rel, "symlink_loop"))
        return None
    except FileNotFoundError:
        issues.append(WalkIssue(rel, "dangling_symlink"))
        return None
    except OSError as exc:
        reason = "symlink_loop" if exc.errno == errno.ELOOP else f"unreadable: {exc.strerror}"
        issues.append(WalkIssue(rel, reason))
        return None
    return WalkEntry(
        rel, info.st_size, info.st_mtime_ns, info.st_ino, info.st_size > options.max_file_bytes
    )
