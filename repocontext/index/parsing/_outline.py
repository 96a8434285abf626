"""Symbol trees from definitions found by the parser: nesting, kinds and dotted names.

Nothing here touches tree-sitter: :mod:`repocontext.index.parsing.parser` turns query matches into
:class:`Definition` records (byte ranges, lines, the name as written) and this module
nests them by byte-range containment and names them (see the parser's module docstring for
the fully qualified name rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repocontext.index.model import Symbol

__all__ = ["Definition", "module_name", "nest", "qualify"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MAX_NAME = 120

# A function directly inside one of these is a method.
_METHOD_PARENTS = frozenset({"class", "struct", "interface", "trait", "impl", "enum"})
# Definitions that never enclose others; anything nested in them belongs to their parent.
_LEAF_KINDS = frozenset({"type", "constant", "macro", "property", "variable", "field"})
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_DECLARATION_EXTENSIONS = frozenset({".ts", ".mts", ".cts"})


@dataclass(slots=True)
class Definition:
    """A definition as found by the query, before nesting gives it a parent.

    Attributes:
        kind: Symbol kind; ``function`` may still become ``method`` when nested.
        name: The bare name.
        segments: Dotted name segments below the parent (qualifiers, then the name).
        signature: The signature line.
        start_byte: Start of the definition, decorators and attributes included.
        end_byte: End of the definition.
        start_line: 1-based first line.
        end_line: 1-based last line.
        pattern: Index of the query pattern that found it (a later pattern wins).
        children: Nested definitions, filled by :func:`nest`.
        name_byte: Where its name starts (one declaration may name several definitions).
    """

    kind: str
    name: str
    segments: tuple[str, ...]
    signature: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    pattern: int
    children: list[Definition] = field(default_factory=list)
    name_byte: int = 0


def _clean(name: str) -> str:
    # Names as written may span lines (templates, macros); keys and outlines want one line.
    if len(name) <= _MAX_NAME and name.isidentifier():
        return name  # nearly every name: nothing to collapse or drop
    return _CONTROL.sub("", " ".join(name.split()))[:_MAX_NAME]


def module_name(path: str) -> str:
    """Return the dotted module part of fully qualified names for a repository path.

    Args:
        path: Repository-relative path, ``/`` separated (backslashes count as ``/``).

    Returns:
        ``src/pkg/mod.py`` -> ``src.pkg.mod``; ``pkg/__init__.py`` -> ``pkg``;
        ``src/types.d.ts`` -> ``src.types``;
        ``Rakefile`` -> ``Rakefile``; ``__init__.py`` at the root -> ``""``.
    """
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts:
        return ""
    last = parts[-1]
    dot = last.rfind(".")
    if dot > 0:
        if last[dot:] in _DECLARATION_EXTENSIONS and last[:dot].endswith(".d") and dot > 2:
            dot -= 2  # `types.d.ts` declares the module `types`
        last = last[:dot]
    parts[-1] = last
    if last == "__init__":
        parts.pop()
    return ".".join(parts)


def qualify(kind: str, written: str) -> tuple[str, str, tuple[str, ...]]:
    """Split a name as written into ``(kind, bare name, dotted segments)``.

    ``Circle::area`` (a C++ function defined outside its class) becomes the method ``area``
    with segments ``(Circle, area)``; a namespace keeps its whole written name.
    """
    if "::" not in written:
        return kind, written, (written,)
    plain = written
    while "<" in plain and "operator" not in plain:
        stripped = _TEMPLATE_ARGS.sub("", plain)
        if stripped == plain:
            break
        plain = stripped
    parts = tuple(part for part in plain.split("::") if part)
    if kind == "namespace":
        return kind, written, parts
    return ("method" if kind == "function" else kind), parts[-1], parts


def nest(definitions: list[Definition], module: str) -> tuple[Symbol, ...]:
    """Arrange definitions by byte-range containment and build the symbol tree."""
    definitions.sort(key=lambda d: (d.start_byte, -d.end_byte))
    roots: list[Definition] = []
    stack: list[Definition] = []
    for definition in definitions:
        while stack and stack[-1].end_byte < definition.end_byte:
            stack.pop()
        if stack:
            parent = stack[-1]
            if definition.kind == "function" and parent.kind in _METHOD_PARENTS:
                definition.kind = "method"
            parent.children.append(definition)
        else:
            roots.append(definition)
        if definition.kind not in _LEAF_KINDS:
            stack.append(definition)
    prefix = (module,) if module else ()
    return tuple(_symbol(definition, prefix) for definition in roots)


def _symbol(definition: Definition, prefix: tuple[str, ...]) -> Symbol:
    """Freeze a definition (and its children) into a Symbol under a dotted prefix."""
    path = prefix + tuple(_clean(segment) for segment in definition.segments)
    return Symbol(
        kind=definition.kind,
        name=_clean(definition.name),
        fq_name=".".join(path),
        signature=definition.signature,
        start_line=definition.start_line,
        end_line=definition.end_line,
        children=tuple(_symbol(child, path) for child in definition.children),
    )
