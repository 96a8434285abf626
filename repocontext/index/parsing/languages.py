"""Which language a repository file is written in, and whether it is a test or a config file.

Everything here works on repository-relative paths (``/`` separated, as the walker yields
them); nothing reads the file. The language ids are the ones
:func:`repocontext.index.parsing.parser.parse_outline` accepts.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "LANGUAGES",
    "content_language",
    "is_config_path",
    "is_documentation_path",
    "is_test_path",
    "language_for",
]

LANGUAGES: tuple[str, ...] = (
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "csharp",
    "ruby",
)

_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
}

_BY_NAME: dict[str, str] = {
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Guardfile": "ruby",
    "Capfile": "ruby",
    "Vagrantfile": "ruby",
    "Podfile": "ruby",
    "Brewfile": "ruby",
    "config.ru": "ruby",
    "SConstruct": "python",
    "SConscript": "python",
}

_TEST_DIRS = frozenset({"test", "tests", "spec", "specs", "__tests__"})
_DOC_ROOTS = frozenset({"doc", "docs", "man", "examples", "demo", "demos", "sample", "samples"})
"""Top-level directories of documentation and examples (GitHub Linguist's classification)."""
_DOC_DIRS = frozenset({"documentation", "javadoc"})
"""Documentation directories at any depth."""

# One alternation per naming convention; matched against the file name only.
_TEST_NAME = re.compile(
    r"""^(?:
        test_.+\.py | .+_test\.py | conftest\.py
      | .+_test\.go
      | .+\.(?:test|spec)\.(?:[cm]?[jt]sx?)
      | .+Tests?\.(?:java|kt|cs) | .+Specs?\.cs
      | .+_(?:spec|test)\.rb
      | tests?\.(?:c|cc|cpp|cxx)
      | test_.+\.(?:c|cc|cpp|cxx|rs) | .+[_-](?:test|unittest)\.(?:c|cc|cpp|cxx|rs)
    )$""",
    re.VERBOSE,
)

_CONFIG_NAMES = frozenset(
    {
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "tox.ini",
        "requirements.txt",
        "Pipfile",
        "package.json",
        "package-lock.json",
        "pnpm-workspace.yaml",
        "go.mod",
        "go.sum",
        "Cargo.toml",
        "Cargo.lock",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "gradle.properties",
        "Gemfile",
        "Gemfile.lock",
        "Rakefile",
        "Makefile",
        "GNUmakefile",
        "CMakeLists.txt",
        "meson.build",
        "Dockerfile",
        "docker-compose.yml",
        ".editorconfig",
        ".gitignore",
        ".gitattributes",
        ".dockerignore",
        ".npmrc",
        ".nvmrc",
        ".babelrc",
        ".prettierrc",
        ".eslintrc",
        "Directory.Build.props",
        "global.json",
        "nuget.config",
    }
)

_CONFIG_SUFFIXES = (".toml", ".ini", ".cfg", ".yml", ".yaml", ".conf", ".properties")

_CONFIG_NAME = re.compile(
    r"""^(?:
        tsconfig.*\.json | jsconfig.*\.json
      | \.eslintrc\..+ | \.prettierrc\..+ | \.babelrc\..+
      | (?:vite|webpack|rollup|jest|vitest|babel|eslint|prettier|tailwind|postcss)\.config\..+
      | .+\.(?:csproj|fsproj|vbproj|sln|props|targets)
      | requirements.*\.txt
    )$""",
    re.VERBOSE,
)


# What only C++ says, at the start of a line (or `std::` on a line that is no comment): a
# `.h` file holding it is parsed as C++. `extern "C"` inside `#ifdef __cplusplus` does not
# count: C headers have it.
_CPP_SIGNS = re.compile(
    rb"""^[ \t]*(?:
        namespace[ \t]+\w | template[ \t]*< | using[ \t]+namespace\b
      | class[ \t]+\w[^;(\n]*(?:\{|:[^:]) | (?:public|private|protected)[ \t]*:
    ) | ^[^/*\n]*\bstd::""",
    re.MULTILINE | re.VERBOSE,
)


def content_language(path: str, data: bytes) -> str | None:
    """The language of a file from its path and bytes.

    A ``.h`` file that reads as C++ is ``cpp`` (``.h`` is both languages' header); any other
    file is what :func:`language_for` says.
    """
    language = language_for(path)
    if language == "c" and path[-2:].lower() == ".h" and _CPP_SIGNS.search(data):
        return "cpp"
    return language


def language_for(path: str) -> str | None:
    """Return the language id of a repository file, or ``None`` when it has no outline.

    Args:
        path: Repository-relative path, ``/`` separated.

    Returns:
        One of :data:`LANGUAGES`, chosen by extension (case-insensitive) or by a well-known
        file name (``Rakefile``, ``Gemfile``), else ``None``.
    """
    name = _basename(path)
    by_name = _BY_NAME.get(name)
    if by_name is not None:
        return by_name
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return _BY_EXTENSION.get(name[dot:].lower())


def _basename(path: str) -> str:
    # PurePosixPath(path).name without building a path object (hot: once per file and link).
    name = path.rstrip("/").rpartition("/")[2]
    return "" if name == "." else name


@functools.lru_cache(maxsize=1 << 17)
def is_test_path(path: str) -> bool:
    """Return True when the path looks like a test by directory or by file name.

    Test directories are ``test``, ``tests``, ``spec``, ``specs`` and ``__tests__`` anywhere
    in the path; test file names follow each ecosystem's convention (``test_x.py``,
    ``x_test.py``, ``conftest.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js``,
    ``XTest.java``, ``XTests.cs``, ``x_spec.rb``, ``x_test.rb``, ...).

    Args:
        path: Repository-relative path, ``/`` separated.
    """
    parts = [part for part in path.split("/") if part and part != "."]
    if not parts:
        return False
    if any(part in _TEST_DIRS for part in parts[:-1]):
        return True
    return _TEST_NAME.match(parts[-1]) is not None


@functools.lru_cache(maxsize=1 << 17)
def is_documentation_path(path: str) -> bool:
    """Return True for a file of the documentation or of the examples, by its directory.

    The directories are those GitHub Linguist counts as documentation: ``doc``, ``docs``,
    ``man``, ``examples``, ``demo``, ``demos``, ``sample`` and ``samples`` (any case) at the
    top of the repository, ``documentation`` and ``javadoc`` at any depth. Code there shows
    how the project is used; it is rarely what a change to the project needs.

    Args:
        path: Repository-relative path, ``/`` separated.
    """
    parts = [part.lower() for part in path.split("/") if part and part != "."][:-1]
    if not parts:
        return False
    return parts[0] in _DOC_ROOTS or any(part in _DOC_DIRS for part in parts)


def is_config_path(path: str) -> bool:
    """Return True for build, package and tool configuration files.

    These are manifests (``pyproject.toml``, ``package.json``, ``go.mod``, ``Cargo.toml``,
    ``pom.xml``, ``build.gradle``, ``*.csproj``, ``Gemfile``), build files (``Makefile``,
    ``CMakeLists.txt``, ``Dockerfile``), ``tsconfig*.json`` and any ``.toml``, ``.ini``,
    ``.cfg``, ``.yml``, ``.yaml``, ``.conf`` or ``.properties`` file.

    Args:
        path: Repository-relative path, ``/`` separated.
    """
    name = _basename(path)
    if name in _CONFIG_NAMES:
        return True
    if name.lower().endswith(_CONFIG_SUFFIXES):
        return True
    return _CONFIG_NAME.match(name) is not None
