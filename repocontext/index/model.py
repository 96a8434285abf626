"""What the indexer extracts from one file, independent of the store and of tree-sitter."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, Final, TypeVar

__all__ = [
    "IMPORT",
    "REFERENCE",
    "TEST",
    "FileOutline",
    "ImportRef",
    "Link",
    "Symbol",
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
