"""What the indexer extracts from one file, independent of the store and of tree-sitter."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, Final, TypeVar

__all__ = [
    "IMPORT",
    "REFERENCE",
    "TEST",
    "FileLinks",
    "FileNode",
    "FileOutline",
    "ImportRef",
    "Link",
    "NodeStat",
    "RelatedLink",
    "Symbol",
    "count_tree",
    "first_of_tree",
    "pickled_by_fields",
]

_T = TypeVar("_T")


def pickled_by_fields(cls: type[_T]) -> type[_T]:
    """Pickle a frozen slotted dataclass as its constructor call (class, field values).

    The default for slotted classes pickles a state that is set back field by field on
    load; parse results cross from the parser processes by the hundred thousand, and this
    form is about a third cheaper each way.
    """
    values = attrgetter(*(f.name for f in fields(cls)))  # type: ignore[arg-type]

    def __reduce__(self: Any) -> tuple[type[_T], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition in a file.

    Attributes:
        kind: ``class``, ``function``, ``method``, ``interface``, ``struct``, ``enum``,
            ``trait``, ``impl``, ``module``, ``namespace``, ``type``, ``constant``,
            ``variable``, ``field``, ``property``, ``constructor`` or ``macro``.
        name: The bare name (``method``).
        fq_name: The fully qualified name inside the repository, dotted for every language:
            ``pkg.mod.Class.method`` (the module part is derived from the file path).
        signature: The first line of the definition, stripped (at most 200 characters).
        start_line: 1-based first line.
        end_line: 1-based last line (inclusive).
        children: Nested definitions (methods of a class, functions of a module block).
    """

    kind: str
    name: str
    fq_name: str
    signature: str
    start_line: int
    end_line: int
    children: tuple[Symbol, ...] = ()


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ImportRef:
    """One import, include or module declaration, as written in the source.

    Attributes:
        spec: The imported module, path or package as written (``os.path``, ``./util``,
            ``github.com/x/y/pkg``, ``util.h``, ``foo`` for Rust ``mod foo;``).
        kind: How to resolve it: ``python``, ``js``, ``go``, ``rust_mod``, ``rust_use``,
            ``rust_mod_path``, ``java``, ``csharp``, ``c_include``, ``ruby_require`` or
            ``ruby_require_relative``.
        line: 1-based line of the import.
        level: Leading dots of a Python relative import (0 for absolute).
        names: Names imported from it, where the syntax lists them (``from a import b, c``).
        system: True for ``#include <x>`` (never resolved to a repository file).
    """

    spec: str
    kind: str
    line: int
    level: int = 0
    names: tuple[str, ...] = ()
    system: bool = False


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class FileOutline:
    """Everything parsed out of one file.

    Attributes:
        language: Language id (``python``, ``javascript``, ``typescript``, ``tsx``, ``go``,
            ``rust``, ``java``, ``c``, ``cpp``, ``csharp``, ``ruby``).
        symbols: Top-level definitions, each with its nested ones.
        imports: Imports in source order.
        references: Distinct identifiers used in the file that are not defined in it, sorted
            (at most 2,000).
        member_references: Those of ``references`` the file uses as a member somewhere
            (``obj.name``, Rust ``Type::name``), sorted; only in the languages of
            :data:`~repocontext.index.parsing._lexer.MEMBER_ACCESS` (empty in the others).
        package: The declared package or namespace where the language has one (Go
            ``package``, Java ``package``, C# ``namespace``), else ``None``.
        errors: True when tree-sitter reported syntax errors (the outline is best effort).
    """

    language: str
    symbols: tuple[Symbol, ...] = ()
    imports: tuple[ImportRef, ...] = ()
    references: tuple[str, ...] = ()
    package: str | None = None
    errors: bool = False
    member_references: tuple[str, ...] = ()


IMPORT: Final = "import"
REFERENCE: Final = "reference"
TEST: Final = "test"
"""The kinds of :class:`Link`: a file imports, references or tests another."""


@dataclass(frozen=True, slots=True)
class Link:
    """A resolved relation between two repository files, with the reason it was made.

    Attributes:
        source: Repository-relative path that imports, references or tests.
        target: Repository-relative path it points at.
        kind: ``import``, ``reference`` or ``test``.
        reason: Why the link was made, e.g. ``python import pkg.util``,
            ``js import ./util (index resolution)``, ``naming test_util.py``,
            ``test imports src/util.py``, ``references symbol util.parse``.
        names: Symbol names involved, when known.
    """

    source: str
    target: str
    kind: str
    reason: str
    names: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class NodeStat:
    """The fields of a stored file node the fast path compares with the file on disk.

    Attributes:
        path: Repository-relative path.
        size: Size in bytes when indexed.
        mtime_ns: Modification time (nanoseconds) when indexed.
        inode: Inode number when indexed.
        blob_id: The git blob id of the bytes indexed (``None`` for a file not read).
        format: The node format it was written with (an older one is parsed again).
        token_encoding: The encoding its token count is in (``None``: the default one).
        has_content: A content record holds its text.
        oversized: It was over the size cap when indexed (no content read).
    """

    path: str
    size: int
    mtime_ns: int
    inode: int
    blob_id: str | None
    format: int
    token_encoding: str | None = None
    has_content: bool = False
    oversized: bool = False

    def matches(self, size: int, mtime_ns: int, inode: int, node_format: int) -> bool:
        """Whether the file's stat tuple (and the node format) are the ones indexed."""
        return (
            self.format == node_format
            and self.size == size
            and self.mtime_ns == mtime_ns
            and self.inode == inode
        )


@dataclass(frozen=True, slots=True)
class FileNode:
    """A stored file node (``repo/{id}/file/{path}``), parsed once from its record.

    Attributes:
        path: Repository-relative path.
        language: Language id, ``None`` for files without a parser (docs, config).
        blob_id: The git blob id of the bytes indexed (``None`` for a file not read).
        token_count: Exact tokens of the whole text (0 without text).
        token_encoding: The encoding ``token_count`` was counted with.
        lines: Lines of the text (0 without text).
        has_content: Whether the text is stored (not binary, oversized or undecodable).
        is_test: Classified as a test file.
        is_config: Classified as a configuration file.
        binary: Skipped as binary.
        oversized: Over the size cap.
        undecodable: Not UTF-8.
        syntax_errors: The parser met a syntax error (the outline is best effort).
        package: The declared package or namespace, or the manifest name.
        matches_git_index: Whether the blob id equals git's index entry (``None``: no entry).
        issue: Why the file's text is missing, when it is.
        symbols: Top-level definitions with their nested ones.

    The record's stat tuple is :class:`NodeStat` (what drift compares), and the inputs of link
    resolution it also holds (imports, references, member references) are not part of it:
    only the indexer needs them, and it reads them with
    :func:`~repocontext.index.files.nodes.outline_of`; read views parse what they use.
    """

    path: str
    language: str | None
    blob_id: str | None
    token_count: int = 0
    token_encoding: str | None = None
    lines: int = 0
    has_content: bool = False
    is_test: bool = False
    is_config: bool = False
    binary: bool = False
    oversized: bool = False
    undecodable: bool = False
    syntax_errors: bool = False
    package: str | None = None
    matches_git_index: bool | None = None
    issue: str | None = None
    symbols: tuple[Symbol, ...] = ()


@dataclass(frozen=True, slots=True)
class RelatedLink:
    """One stored link of a file, seen from that file.

    Attributes:
        path: The file at the other end.
        reason: Why the link was made (``python import pkg.util``, ``naming test_util.py``).
        names: Symbol names involved, when known.
    """

    path: str
    reason: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FileLinks:
    """The stored links of one file, from its ``out:`` or its ``in:`` record.

    An ``out:`` record holds imports and references, an ``in:`` record dependents and covering
    tests; the lists a record does not hold are empty.

    Attributes:
        imports: Files it imports.
        references: Files defining names it uses.
        dependents: Files importing or referencing it.
        covering_tests: Tests that cover it.
    """

    imports: tuple[RelatedLink, ...] = ()
    references: tuple[RelatedLink, ...] = ()
    dependents: tuple[RelatedLink, ...] = ()
    covering_tests: tuple[RelatedLink, ...] = ()


def count_tree(symbols: tuple[Symbol, ...]) -> int:
    """How many symbols a symbol tree holds, nested ones included."""
    return sum(1 + count_tree(s.children) for s in symbols)


def first_of_tree(symbols: tuple[Symbol, ...], budget: int) -> tuple[Symbol, ...]:
    """The first ``budget`` symbols of a tree in depth-first order, nested as they are."""
    left = [budget]

    def take(level: tuple[Symbol, ...]) -> tuple[Symbol, ...]:
        kept: list[Symbol] = []
        for symbol in level:
            if left[0] <= 0:
                break
            left[0] -= 1
            children = take(symbol.children) if symbol.children else ()
            kept.append(replace(symbol, children=children))
        return tuple(kept)

    return take(symbols)
