"""Tree-sitter outlines: symbols, imports, references and package of one source file.

This is the only module that imports ``tree_sitter``. Each language has one query file,
``queries/<language>.scm`` (package data; ``; inherits: x`` on its first line prepends
``x.scm``), whose captures name what they find: ``@definition.<kind>`` with ``@name`` (and
optionally ``@scope``, a qualifier, ``@signature``, the node whose first line is the
signature instead of the name's line, ``@cast``, a C++ conversion operator, named
``operator <type>``, and ``@body``, a node after the definition's own that it extends to),
``@import.<kind>`` with an optional ``@spec``,
and ``@package``. When two patterns capture one definition node, the later pattern wins.
Besides the built-in ``#eq?`` and ``#match?``, a pattern may test
``(#directly-in? @capture type ...)``: the capture's nearest ancestor that is not a
preprocessor conditional (``#if``, ``#ifdef``, ``#elif``, ``#else`` blocks are not scopes)
or a C++ ``template <...>`` has one of the types, so a C prototype in an include guard
counts as file level. One
pass over the query's matches collects definitions, imports and the package; referenced names
come from lexing the source (:mod:`repocontext.index.parsing._lexer`), which is several times
cheaper than capturing every identifier node. Nesting is computed from the byte ranges of the
definitions, not by walking the tree.

Fully qualified names are dotted for every language. The module part is the file path
without its extension, ``/`` replaced by ``.`` (``src/pkg/mod.py`` -> ``src.pkg.mod``;
a Python ``__init__`` names its package, ``src/pkg/__init__.py`` -> ``src.pkg``). Then
come the enclosing definitions, an ``@scope`` qualifier (a Go method's receiver type) and
the name: ``src.pkg.mod.Class.method``, ``store.Store.Get`` for ``func (s *Store) Get``
in ``store.go``. Names written qualified (``Circle::area`` in C++, ``Shop::Product`` in
Ruby) add their qualifiers as dotted segments and keep only the last one as the bare name;
namespaces keep their whole written name (C# ``Acme.Billing``).

Parsers are not thread safe, so each thread keeps its own; compiled queries are shared.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Final, Literal

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from repocontext.errors import UnsupportedLanguageError
from repocontext.index.model import FileOutline, ImportRef, Symbol
from repocontext.index.parsing._lexer import identifier_uses
from repocontext.index.parsing._outline import Definition, module_name, nest, qualify

__all__ = ["MAX_REFERENCES", "MAX_SIGNATURE", "module_name", "parse_outline"]

MAX_REFERENCES = 2000
MAX_SIGNATURE = 200

_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
}

# Nodes that wrap a definition and belong to it (Python decorators, C++ templates).
_WRAPPERS = frozenset({"decorated_definition", "template_declaration"})
# Nodes that `#directly-in?` looks through: C and C++ preprocessor conditionals, and the
# `template <...>` of a C++ prototype.
_CONDITIONALS = frozenset(
    {
        "preproc_if",
        "preproc_ifdef",
        "preproc_elif",
        "preproc_elifdef",
        "preproc_else",
        "template_declaration",
    }
)
# C and C++ test macros a test file defines its tests with; the definition is named
# `TEST(Suite, Name)` after its whole head.
_TEST_MACROS = frozenset(
    {
        "TEST",
        "TEST_F",
        "TEST_P",
        "TYPED_TEST",
        "TYPED_TEST_P",
        "BOOST_AUTO_TEST_CASE",
        "BOOST_FIXTURE_TEST_CASE",
        "TEST_CASE",  # Catch2 and doctest (a call and a block, see cpp.scm)
        "TEST_CASE_METHOD",
        "TEST_CASE_FIXTURE",
        "SCENARIO",
        "SCENARIO_METHOD",
    }
)
# C# operators: their name is the operator (or the type converted to), after `operator`.
_OPERATORS = frozenset({"operator_declaration", "conversion_operator_declaration"})
# An export macro between `class` and the name (`class FMT_API file {`, `struct TORCH_API
# Context : Base {`): tree-sitter reads a function named after the class, so the class and
# its members are lost. The macro (all capitals, maybe with arguments) is blanked out before
# parsing; byte offsets and lines stay the same, and signatures come from the source.
_CLASS_MACRO = re.compile(
    rb"(?:class|struct)(?<![\w]class)(?<![\w]struct)[ \t]+"
    rb"([A-Z_][A-Z0-9_]+(?:\([^()\n]{0,200}\))?)[ \t]+"
    rb"(?=(?!final\b)[A-Za-z_]\w*(?:<[^;{}\n]{0,300}>)?[ \t]*(?:final\b[ \t]*)?[:{\n])"
)
_CAPTURE = re.compile(r"@([A-Za-z_][\w.]*)")
_INHERITS = re.compile(r"^; inherits: (\w+)")


@dataclass(frozen=True, slots=True)
class _Grammar:
    """A language's compiled grammar and queries, plus the role of each outline pattern."""

    language: Language
    outline: Query
    roles: dict[int, tuple[str, str]]


def parse_outline(language: str, source: bytes, path: str) -> FileOutline:
    """Parse one file and extract its outline.

    Args:
        language: A language id from :data:`repocontext.index.parsing.languages.LANGUAGES`.
        source: The file's bytes; invalid UTF-8 is tolerated (text is decoded with
            replacement characters).
        path: Repository-relative path, ``/`` separated; it names the module part of every
            fully qualified name.

    Returns:
        The outline. Syntax errors do not fail the parse: the outline is best effort and
        ``errors`` is True.

    Raises:
        UnsupportedLanguageError: The language has no grammar.
    """
    grammar = _grammar(language)
    tree = _parser(language).parse(_without_class_macros(source) if language == "cpp" else source)
    root = tree.root_node
    definitions: dict[tuple[int, int, int], Definition] = {}
    imports: list[tuple[int, ImportRef]] = []
    aliases: set[str] = set()  # local names an import binds (`* as util`, `numpy as np`)
    package: str | None = None
    attributed = language == "rust"  # only Rust items carry attribute siblings
    several_names = language != "cpp"
    for pattern, captures in QueryCursor(grammar.outline).matches(root, _predicate):
        role, kind = grammar.roles[pattern]
        if role == "definition":
            found = _definition(kind, pattern, captures, source, attributed)
            # One declaration may name several constants or types (`const a, b = 1, 2`,
            # `typedef struct {...} a_t, *a_p`): each name is a definition of its own. Not in
            # C++, where a macro-broken parse matches one node with two garbage names.
            key = (found.start_byte, found.end_byte, found.name_byte if several_names else 0)
            known = definitions.get(key)
            if known is None or known.pattern < pattern:
                definitions[key] = found
        elif role == "import":
            node = captures[f"import.{kind}"][0]
            spec = captures.get("spec")
            refs = _IMPORTS[kind](node, spec[0] if spec else node)
            imports.extend((node.start_byte, ref) for ref in refs)
            aliases.update(_aliases(node))
        elif role == "package" and package is None:
            package = _text(captures["package"][0])
    symbols = nest(list(definitions.values()), module_name(path))
    if language == "csharp" and package is not None:
        package = _csharp_namespace(symbols) or package
    return FileOutline(
        language=language,
        symbols=symbols,
        imports=tuple(ref for _, ref in sorted(imports, key=lambda item: item[0])),
        package=package,
        errors=root.has_error,
        **_references(source, language, {d.name for d in definitions.values()} | aliases),
    )


def _predicate(
    predicate: str,
    args: list[tuple[str, Literal["capture", "string"]]],
    pattern_index: int,
    captures: dict[str, list[Node]],
) -> bool:
    """Evaluate a query predicate tree-sitter does not know (see the module docstring)."""
    if predicate != "directly-in?":
        raise ValueError(f"unknown query predicate #{predicate} in pattern {pattern_index}")
    (capture, _), *types = args
    parent = captures[capture][0].parent
    while parent is not None and parent.type in _CONDITIONALS:
        parent = parent.parent
    return parent is not None and any(parent.type == kind for kind, _ in types)


def _definition(
    kind: str, pattern: int, captures: dict[str, list[Node]], source: bytes, attributed: bool
) -> Definition:
    """Build a definition from one match (every definition pattern captures a name)."""
    node = captures[f"definition.{kind}"][0]
    names = captures["name"]
    name_node = names[0]
    written = _text(name_node)
    segments: tuple[str, ...]
    if "cast" in captures:  # C++ `operator bool()`: the name is the type converted to
        written = f"operator {' '.join(written.split())}"
        name, segments = written, (written,)
    elif written in _TEST_MACROS and node.type in ("function_definition", "expression_statement"):
        # `TEST(Suite, Name) { ... }` (GoogleTest, Boost.Test), `TEST_CASE("name") { ... }`
        # (Catch2, doctest): named by its arguments, not a hundred functions called TEST
        written = " ".join(_text(name_node.parent or name_node).split())
        name, segments = written, (written,)
    else:
        if node.type in _OPERATORS:  # C# `operator +` and `implicit operator decimal`
            written = f"operator {written}"
        kind, name, segments = qualify(kind, written)
    scope = captures.get("scope")
    if scope:
        segments = (_text(scope[0]), *segments)
    end = (captures.get("body") or (node,))[0]  # (a test case's block follows its head)
    end_byte, (end_row, end_column) = end.end_byte, end.end_point
    start_row = node.start_point.row
    if end_row > start_row and end_column == 0:
        end_row -= 1
    start = node
    outer = node.parent
    if outer is not None and outer.type in _WRAPPERS:
        start = outer  # a definition starts at its decorators or template parameters
    before = start.prev_named_sibling if attributed else None
    while before is not None and before.type == "attribute_item":
        start, before = before, before.prev_named_sibling  # and a Rust item at its attributes
    if node.type == "file_scoped_namespace_declaration":
        # `namespace A.B;` covers the rest of the file.
        end_byte = len(source)
        end_row = max(end_row, source.count(b"\n", 0, len(source.rstrip())))
    return Definition(
        kind=kind,
        name=name,
        segments=segments,
        signature=_line_of(source, (captures.get("signature") or names)[0].start_byte),
        start_byte=start.start_byte,
        end_byte=end_byte,
        start_line=(start_row if start is node else start.start_point.row) + 1,
        end_line=end_row + 1,
        pattern=pattern,
        name_byte=name_node.start_byte,
    )


def _without_class_macros(source: bytes) -> bytes:
    """``source`` with the export macros of C++ class heads blanked (same length)."""
    if _CLASS_MACRO.search(source) is None:
        return source

    def blank(match: re.Match[bytes]) -> bytes:
        start, end = match.span(1)
        whole = match[0]
        return whole[: start - match.start()] + b" " * (end - start) + whole[end - match.start() :]

    return _CLASS_MACRO.sub(blank, source)


def _csharp_namespace(symbols: tuple[Symbol, ...]) -> str | None:
    """The namespace of a C# file's first type, nested blocks joined.

    ``namespace A { namespace B.C { class X {} } }`` is ``A.B.C``; a file declaring no type
    gets its innermost first namespace.
    """
    names: list[str] = []
    level = symbols
    while level:
        inner = next((s for s in level if s.kind == "namespace"), None)
        if inner is None or (names and level[0] is not inner):
            break  # a type comes first in this namespace: it is the file's
        names.append(inner.name)
        level = inner.children
    return ".".join(names) or None


def _references(source: bytes, language: str, defined: set[str]) -> dict[str, tuple[str, ...]]:
    """The outline's ``references`` and ``member_references``.

    Distinct identifiers used in the file, sorted and capped, minus the names it defines, and
    those of them it uses as members. Every name it defines, at any depth: a test's local
    ``check`` helper or a class's own ``check`` method is the file's own, not a use of another
    file's ``check``.
    """
    names, members = identifier_uses(source, language)
    references = tuple(sorted(names - defined)[:MAX_REFERENCES])
    kept = members.intersection(references) if members else ()
    return {"references": references, "member_references": tuple(sorted(kept))}


_ALIASED: Final = frozenset({"import_specifier", "aliased_import", "use_as_clause"})


def _aliases(node: Node) -> Iterator[str]:
    """The local names an import statement binds under a name of its own.

    ``import * as util`` (its namespace), ``import { a as b }``, Python's ``import numpy as
    np`` and ``from x import a as b``, Rust's ``use a::b as c``: the file's own names, not
    uses of another file's ``util`` or ``b`` (what they stand for is linked by the import).
    """
    pending = [node]
    while pending:
        current = pending.pop()
        if current.type == "namespace_import":
            yield from (_text(child) for child in current.named_children)
        elif current.type in _ALIASED:
            alias = current.child_by_field_name("alias")
            named = current.child_by_field_name("name") or current.child_by_field_name("path")
            written = re.split(r"[.:]", _text(named))[-1] if named is not None else None
            # (`from .app import Flask as Flask` re-exports the name itself: a use of it)
            if alias is not None and _text(alias) != written:
                yield _text(alias)
        else:
            pending.extend(current.named_children)


def _line_of(source: bytes, offset: int) -> str:
    """The stripped source line holding ``offset``, at most ``MAX_SIGNATURE`` characters."""
    start = source.rfind(b"\n", 0, offset) + 1
    end = source.find(b"\n", offset)
    line = source[start : end if end >= 0 else len(source)]
    return line.decode("utf-8", "replace").strip()[:MAX_SIGNATURE]


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _python_import(node: Node, _spec: Node) -> list[ImportRef]:
    """``import a.b, c`` gives one ref per module; ``from ..a import b`` gives one ref."""
    line = node.start_point.row + 1
    names = [_imported_name(child) for child in node.children_by_field_name("name")]
    if node.type == "import_statement":
        return [ImportRef(name, "python", line) for name in names]
    module = node.child_by_field_name("module_name")
    spec, level = "", 0
    for part in module.named_children if module and module.type == "relative_import" else ():
        if part.type == "import_prefix":
            level = _text(part).count(".")
        else:
            spec = _text(part)
    if module is not None and module.type != "relative_import":
        spec = _text(module)
    if any(child.type == "wildcard_import" for child in node.named_children):
        names.append("*")
    return [ImportRef(spec, "python", line, level=level, names=tuple(names))]


def _imported_name(node: Node) -> str:
    """The imported (not the local) name of ``a`` or ``a as b``."""
    if node.type in ("aliased_import", "import_specifier", "export_specifier", "use_as_clause"):
        inner = node.child_by_field_name("name") or node.child_by_field_name("path")
        if inner is not None:
            return _text(inner)
    return " ".join(_text(node).split())


def _js_import(node: Node, spec: Node) -> list[ImportRef]:
    """ES imports and re-exports list their names; ``require`` and ``import()`` do not.

    A re-export (``export ... from``) has the kind ``js_export``: its file is a barrel
    through which importers reach the re-exported file's names.

    Names are the imported names of ``{a, b as c}``, the local name of a default import and
    ``*`` for a namespace import or ``export *``.
    """
    names: list[str] = []
    for child in node.children if node.type in ("import_statement", "export_statement") else ():
        if child.type in ("*", "namespace_export"):  # `export *` and `export * as ns`
            names.append("*")
        elif child.type in ("import_clause", "export_clause"):
            names += _js_clause_names(child)
    kind = "js_export" if node.type == "export_statement" else "js"  # (a re-export)
    return [ImportRef(_text(spec), kind, node.start_point.row + 1, names=tuple(names))]


def _js_clause_names(clause: Node) -> list[str]:
    names: list[str] = []
    for child in clause.named_children:
        if child.type == "identifier":
            names.append(_text(child))
        elif child.type in ("namespace_import", "namespace_export"):
            names.append("*")
        elif child.type == "named_imports":
            names += (_imported_name(item) for item in child.named_children)
        elif child.type == "export_specifier":
            names.append(_imported_name(child))
    return [name for name in names if name]


def _rust_use(node: Node, spec: Node) -> list[ImportRef]:
    """``use a::b::C`` keeps the path; lists and globs split into a prefix and names."""
    path: Node | None = spec
    names: tuple[str, ...] = ()
    if spec.type in ("scoped_use_list", "use_list"):
        items = spec.child_by_field_name("list") if spec.type == "scoped_use_list" else spec
        path = spec.child_by_field_name("path")
        names = tuple(_imported_name(item) for item in items.named_children) if items else ()
    elif spec.type == "use_wildcard":
        path = spec.named_children[0] if spec.named_child_count else None
        names = ("*",)
    elif spec.type == "use_as_clause":
        path = spec.child_by_field_name("path")
    text = _text(path) if path is not None else ""
    return [ImportRef(text, "rust_use", node.start_point.row + 1, names=names)]


def _rust_mod(node: Node, spec: Node) -> list[ImportRef]:
    """``mod x;`` names its module; ``#[path = "p.rs"] mod x;`` gives its file's path.

    The path form has kind ``rust_mod_path``; the attribute may be any of the item's.
    """
    line = node.start_point.row + 1
    before = node.prev_named_sibling
    while before is not None and before.type == "attribute_item":
        attribute = before.named_children[0] if before.named_child_count else None
        value = attribute.child_by_field_name("value") if attribute is not None else None
        if (
            attribute is not None
            and value is not None
            and value.type == "string_literal"
            and _text(attribute.named_children[0]) == "path"
        ):
            return [ImportRef(_text(value).strip('"'), "rust_mod_path", line)]
        before = before.prev_named_sibling
    return [ImportRef(_text(spec), "rust_mod", line)]


def _java_import(node: Node, _spec: Node) -> list[ImportRef]:
    """``import a.b.C;``, ``import static a.b.C.m;`` and ``import a.b.*;`` (spec as written)."""
    target = node.named_children[0] if node.named_child_count else node
    glob = ".*" if any(child.type == "asterisk" for child in node.children) else ""
    return [ImportRef(_text(target) + glob, "java", node.start_point.row + 1)]


def _csharp_using(node: Node, _spec: Node) -> list[ImportRef]:
    """``using A.B;``, ``using static A.B;`` and ``using X = A.B;`` (the target is last)."""
    target = node.named_children[-1] if node.named_child_count else node
    return [ImportRef(_text(target), "csharp", node.start_point.row + 1)]


def _quoted(kind: str) -> _ImportHandler:
    """A handler for imports whose spec is the captured (possibly quoted) string."""

    def handler(node: Node, spec: Node) -> list[ImportRef]:
        text = _text(spec).strip("\"'`<>")
        system = spec.type == "system_lib_string"
        return [ImportRef(text, kind, node.start_point.row + 1, system=system)]

    return handler


_ImportHandler = Callable[[Node, Node], list[ImportRef]]
_IMPORTS: dict[str, _ImportHandler] = {
    "python": _python_import,
    "js": _js_import,
    "rust_use": _rust_use,
    "rust_mod": _rust_mod,
    "java": _java_import,
    "csharp": _csharp_using,
    **{
        kind: _quoted(kind) for kind in ("go", "c_include", "ruby_require", "ruby_require_relative")
    },
}


_local = threading.local()


def _parser(language: str) -> Parser:
    """This thread's parser for a language (parsers must not be shared between threads)."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = Parser(_grammar(language).language)
    return parser


@functools.cache
def _grammar(language: str) -> _Grammar:
    """Load a language's grammar and compile its queries (once per process)."""
    spec = _GRAMMARS.get(language)
    if spec is None:
        raise UnsupportedLanguageError(language)
    module, function = spec
    grammar = Language(getattr(importlib.import_module(module), function)())
    text = _query_text(language)
    data = text.encode()
    outline = Query(grammar, text)
    roles: dict[int, tuple[str, str]] = {}
    for index in range(outline.pattern_count):
        pattern = data[outline.start_byte_for_pattern(index) : outline.end_byte_for_pattern(index)]
        roles[index] = _role(_CAPTURE.findall(pattern.decode()))
    return _Grammar(grammar, outline, roles)


def _role(captures: list[str]) -> tuple[str, str]:
    """What a pattern finds, from its capture names: ``(role, kind)``."""
    for capture in captures:
        head, _, kind = capture.partition(".")
        if head in ("definition", "import") or capture == "package":
            return head, kind
    return "other", ""


def _query_text(language: str) -> str:
    """A language's query source, with the files it inherits from prepended."""
    text = (
        resources.files("repocontext.index.parsing")
        .joinpath("queries", f"{language}.scm")
        .read_text()
    )
    inherits = _INHERITS.match(text)
    if inherits is None:
        return text
    return _query_text(inherits.group(1)) + "\n" + text
