"""Symbol sources: definitions by name, their source read from disk as it is now.

What an agent asks for when it knows the name (from an outline, a search hit, a stack trace)
and wants the code, not the file. Rules (``docs/tools.md``, ``repocontext_symbol``):

* **Names.** A fully qualified name (``src.flask.app.Flask.run``) or any dotted tail of it
  (``Flask.run``), looked up in the index (:mod:`repocontext.index.projections.
  symbol_lookup`; ``Type::member`` reads as ``Type.member``); or ``path::name``, the
  definitions in that file whose qualified name is ``name``, ends in ``.{name}`` or is the
  file's module followed by ``name``. At most
  :data:`MAX_NAMES` names per call and :data:`MAX_MATCHES` definitions per name (a name
  matching more reports how many in ``ambiguous``).
* **Source.** Each defining file is read as a page is (:func:`~repocontext.pack.page.
  read_source`: the same path rules, and re-indexed first when the index holds another
  version), and the definition is found again in the file's current outline, so its lines
  are the ones on disk now. When the file cannot be re-indexed (a read-only store, an index
  run in progress) the file is parsed here instead. ``text`` is the definition's lines
  exactly; ``token_count`` their exact tokens.
* **Enclosing definitions.** For a member (a method of a class, a class inside a namespace)
  the header of each enclosing definition, outermost first: its first lines up to the one
  that opens its body (``:`` or ``{``), decorators included.
* **Failures per name.** A name that matches nothing, a file that is gone or refused, a
  definition no longer in its file: listed in ``missing`` with the reason (and close names
  as suggestions); the other names are still answered.
* **Budget.** With ``budget_tokens`` the definitions are taken in the order asked while
  their tokens (text and enclosing headers) fit; one that does not fit is listed in
  ``omitted`` with its size, whole definitions only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final

from repocontext.errors import InvalidInputError, NotFoundError, RepoContextError
from repocontext.index.files.nodes import read_file_node
from repocontext.index.model import Symbol
from repocontext.index.parsing.languages import language_for
from repocontext.index.parsing.parser import module_name, parse_outline
from repocontext.index.projections.symbol_lookup import (
    Definition,
    NameLookup,
    close_names,
    find_symbols,
)
from repocontext.index.service import IndexService
from repocontext.pack.page import Source, read_source
from repocontext.store import Store, read_repo
from repocontext.tokens import count_tokens

__all__ = [
    "MAX_MATCHES",
    "MAX_NAMES",
    "AmbiguousName",
    "Enclosing",
    "MissingSymbol",
    "OmittedSymbol",
    "SymbolSource",
    "SymbolSources",
    "read_symbols",
]

MAX_NAMES: Final = 20
MAX_MATCHES: Final = 10
"""Most definitions served for one name."""
MAX_NAME_CHARS: Final = 1_000
MAX_HEADER_LINES: Final = 8
_TRAILING_COMMENT: Final = re.compile(r"\s+(#|//).*$")


@dataclass(frozen=True, slots=True)
class Enclosing:
    """A definition around a member: where it is and its header.

    Attributes:
        fq_name: Its fully qualified name.
        kind: ``class``, ``struct``, ``namespace``...
        start_line: Its first line.
        end_line: Its last line.
        header: Its first lines up to the one opening its body, as on disk.
        token_count: Exact tokens of ``header``.
    """

    fq_name: str
    kind: str
    start_line: int
    end_line: int
    header: str
    token_count: int


@dataclass(frozen=True, slots=True)
class SymbolSource:
    """One definition with its source.

    Attributes:
        name: The name as asked.
        fq_name: The fully qualified name.
        path: The defining file.
        kind: ``function``, ``method``, ``class``...
        start_line: First line (decorators included), 1-based.
        end_line: Last line, inclusive.
        signature: The line that declares it, stripped.
        text: Those lines as on disk, line endings included.
        token_count: Exact tokens of ``text``.
        blob_id: Git blob id of the file's bytes.
        fresh: The index holds that version of the file.
        enclosing: Enclosing definitions, outermost first.
    """

    name: str
    fq_name: str
    path: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    text: str
    token_count: int
    blob_id: str
    fresh: bool
    enclosing: tuple[Enclosing, ...] = ()

    @property
    def cost(self) -> int:
        """Tokens it adds to an answer: its text and its enclosing headers."""
        return self.token_count + sum(e.token_count for e in self.enclosing)


@dataclass(frozen=True, slots=True)
class MissingSymbol:
    """A name (or one of its definitions) that could not be served.

    Attributes:
        name: The name as asked.
        reason: Why, in a sentence.
        suggestions: Close qualified names, when the name matched nothing.
    """

    name: str
    reason: str
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OmittedSymbol:
    """A definition left out because it did not fit the budget.

    Attributes:
        name: The name as asked.
        fq_name: Its fully qualified name.
        path: Its file.
        start_line: Its first line.
        end_line: Its last line.
        token_count: Tokens it would have cost (text and enclosing headers).
    """

    name: str
    fq_name: str
    path: str
    start_line: int
    end_line: int
    token_count: int


@dataclass(frozen=True, slots=True)
class AmbiguousName:
    """A name that stands for more than one definition.

    Attributes:
        name: The name as asked.
        matches: How many definitions it matched.
        served: How many of them were looked at (at most :data:`MAX_MATCHES`).
    """

    name: str
    matches: int
    served: int


@dataclass(frozen=True, slots=True)
class SymbolSources:
    """The answer to one call.

    Attributes:
        symbols: The definitions served, in the order asked (a name's in name order).
        missing: Names, or definitions of them, that could not be served.
        omitted: Definitions left out for the budget.
        ambiguous: Names that matched several definitions.
        token_count: Tokens of every ``text`` and enclosing header served.
        budget_tokens: The budget asked for, if any.
    """

    symbols: tuple[SymbolSource, ...]
    missing: tuple[MissingSymbol, ...]
    omitted: tuple[OmittedSymbol, ...]
    ambiguous: tuple[AmbiguousName, ...]
    token_count: int
    budget_tokens: int | None


def read_symbols(
    store: Store,
    index: IndexService,
    repo_id: str,
    names: Sequence[str],
    *,
    budget_tokens: int | None = None,
) -> SymbolSources:
    """Serve the definitions ``names`` stand for, read from disk (rules: module docstring).

    Args:
        store: The store holding the repository's registration and index.
        index: Re-indexes a defining file the index holds another version of.
        repo_id: A registered repository.
        names: Qualified names, dotted tails of them, or ``path::name``.
        budget_tokens: Most tokens of source (and enclosing headers) to serve.

    Raises:
        NotFoundError: No repository ``repo_id`` is registered.
        InvalidInputError: No names, too many, a malformed one, or a budget below 1.
    """
    asked = _checked(names, budget_tokens)
    if read_repo(store, repo_id) is None:
        raise NotFoundError(f"no repository {repo_id[:100]!r} is registered")
    dotted = {name: name.replace("::", ".") for name in asked if not _names_file(name)}
    lookups = find_symbols(store, repo_id, list(dotted.values()), MAX_MATCHES)
    reading = _Reading(store, index, repo_id)
    for name in asked:
        if name in dotted:
            reading.defined(name, lookups[dotted[name]])
        else:
            reading.in_file(name)
    return reading.answer(budget_tokens)


def _names_file(name: str) -> bool:
    """``path::name``: the part before the last ``::`` is a path (it holds ``/`` or ``.``).

    Otherwise ``::`` is a scope separator as C++, Rust and Ruby write it (``Circle::area``),
    read as the dot of a qualified name.
    """
    path, separator, _ = name.rpartition("::")
    return bool(separator) and ("/" in path or "." in path)


def _checked(names: Sequence[str], budget_tokens: int | None) -> list[str]:
    """The distinct names, in order.

    Raises:
        InvalidInputError: No names, too many, a malformed one, or a budget below 1.
    """
    if budget_tokens is not None and budget_tokens < 1:
        raise InvalidInputError(
            f"a budget of {budget_tokens} tokens holds no symbol",
            hint="Pass a budget of 1 or more, or none.",
        )
    asked = list(dict.fromkeys(name.strip() for name in names))
    if not 1 <= len(asked) <= MAX_NAMES:
        raise InvalidInputError(
            f"pass 1 to {MAX_NAMES} distinct names, got {len(asked)}",
            hint="Ask for the rest in another call.",
        )
    for name in asked:
        path, _, symbol = name.rpartition("::")
        bad = not symbol or ("::" in name and not path) or len(name) > MAX_NAME_CHARS
        if bad or any(ord(c) < 32 for c in name):
            raise InvalidInputError(
                f"{name[:100]!r} is no symbol name",
                hint="Pass a fully qualified name (src.pkg.mod.Class.method), a dotted tail "
                "of one (Class.method) or path::name (src/pkg/mod.py::Class.method).",
            )
    return asked


class _Reading:
    """Collects one call's definitions, reading each defining file once."""

    def __init__(self, store: Store, index: IndexService, repo_id: str) -> None:
        self.store, self.index, self.repo_id = store, index, repo_id
        self.count = partial(count_tokens, encoding=index.encoding)
        self.files: dict[str, tuple[Source, tuple[Symbol, ...]] | RepoContextError] = {}
        self.served: list[SymbolSource] = []
        self.missing: list[MissingSymbol] = []
        self.ambiguous: list[AmbiguousName] = []
        self.seen: set[tuple[str, str, int]] = set()

    def defined(self, name: str, lookup: NameLookup) -> None:
        """Serve the definitions the index found for ``name``."""
        if not lookup.found:
            self.missing.append(
                MissingSymbol(name, "no symbol of that name in the index", lookup.suggestions)
            )
            return
        if lookup.total > 1:
            self.ambiguous.append(AmbiguousName(name, lookup.total, len(lookup.found)))
        for definition in _distinct(lookup.found):
            read = self._file(name, definition.path)
            if read is None:
                continue
            source, outline = read
            matches = [m for m in _walk(outline) if m[0].fq_name == definition.fq_name]
            if not matches:
                self.missing.append(
                    MissingSymbol(name, f"{definition.fq_name} is no longer in {source.path}")
                )
            for symbol, around in matches:
                self._serve(name, source, symbol, around)

    def in_file(self, name: str) -> None:
        """Serve ``path::symbol``: the definitions of that name in that file."""
        path, _, wanted = name.rpartition("::")
        read = self._file(name, path)
        if read is None:
            return
        source, outline = read
        module = module_name(source.path)
        matches = list(_walk(outline))
        exact = [m for m in matches if m[0].fq_name in (wanted, f"{module}.{wanted}")]
        tail = [m for m in matches if m[0].fq_name.endswith(f".{wanted}")]
        chosen = exact or tail
        if not chosen:
            self.missing.append(
                MissingSymbol(
                    name,
                    f"{source.path} defines no {wanted}",
                    close_names(wanted, _by_last(symbol.fq_name for symbol, _ in matches)),
                )
            )
            return
        if len(chosen) > 1:
            self.ambiguous.append(AmbiguousName(name, len(chosen), min(len(chosen), MAX_MATCHES)))
        for symbol, around in chosen[:MAX_MATCHES]:
            self._serve(name, source, symbol, around)

    def answer(self, budget: int | None) -> SymbolSources:
        """The definitions that fit ``budget`` (all without one), and what was left out."""
        kept: list[SymbolSource] = []
        omitted: list[OmittedSymbol] = []
        total = 0
        for served in self.served:
            if budget is not None and total + served.cost > budget:
                omitted.append(
                    OmittedSymbol(
                        served.name,
                        served.fq_name,
                        served.path,
                        served.start_line,
                        served.end_line,
                        served.cost,
                    )
                )
                continue
            kept.append(served)
            total += served.cost
        return SymbolSources(
            tuple(kept),
            tuple(self.missing),
            tuple(omitted),
            tuple(self.ambiguous),
            total,
            budget,
        )

    def _file(self, name: str, path: str) -> tuple[Source, tuple[Symbol, ...]] | None:
        """The file's lines and current outline (``None``: refused, listed as missing)."""
        if path not in self.files:
            try:
                source = read_source(self.store, self.index, self.repo_id, path)
                self.files[path] = (source, self._outline(source))
            except RepoContextError as exc:
                self.files[path] = exc
        read = self.files[path]
        if isinstance(read, RepoContextError):
            self.missing.append(MissingSymbol(name, f"{read.code}: {read.message}"))
            return None
        return read

    def _outline(self, source: Source) -> tuple[Symbol, ...]:
        """The symbols of the file's lines now: the index's when fresh, else parsed here."""
        node = read_file_node(self.store, self.repo_id, source.path)
        if node is not None and node.blob_id == source.blob_id:
            return node.symbols
        language = node.language if node is not None else language_for(source.path)
        if language is None:
            return ()
        try:
            return parse_outline(language, "".join(source.lines).encode(), source.path).symbols
        except RepoContextError:  # (a language without a grammar: no outline)
            return ()

    def _serve(self, name: str, source: Source, symbol: Symbol, around: tuple[Symbol, ...]) -> None:
        key = (source.path, symbol.fq_name, symbol.start_line)
        if key in self.seen:
            return
        self.seen.add(key)
        text = "".join(source.lines[symbol.start_line - 1 : symbol.end_line])
        enclosing = tuple(self._enclosing(source.lines, outer) for outer in around)
        self.served.append(
            SymbolSource(
                name=name,
                fq_name=symbol.fq_name,
                path=source.path,
                kind=symbol.kind,
                start_line=symbol.start_line,
                end_line=symbol.end_line,
                signature=symbol.signature,
                text=text,
                token_count=self.count(text),
                blob_id=source.blob_id,
                fresh=source.fresh,
                enclosing=enclosing,
            )
        )

    def _enclosing(self, lines: Sequence[str], outer: Symbol) -> Enclosing:
        header = header_of(lines, outer)
        return Enclosing(
            outer.fq_name,
            outer.kind,
            outer.start_line,
            outer.end_line,
            header,
            self.count(header),
        )


def header_of(lines: Sequence[str], symbol: Symbol) -> str:
    """The first lines of a definition up to the one that opens its body (``:`` or ``{``).

    From its first line (decorators and attributes included) through the line that
    declares it (its signature) to the first line ending in ``:`` or holding ``{``, at most
    :data:`MAX_HEADER_LINES` lines and never into its first member; the declaring line alone
    closes it when no such line comes (Ruby's ``class Foo < Bar``).
    """
    start = symbol.start_line
    last = min(symbol.end_line, start + MAX_HEADER_LINES - 1, len(lines))
    if symbol.children:
        last = min(last, max(start, symbol.children[0].start_line - 1))
    signature = symbol.signature.strip()[:40]
    declared = next(
        (n for n in range(start, last + 1) if lines[n - 1].strip().startswith(signature)), start
    )
    opened = next((n for n in range(declared, last + 1) if _opens(lines[n - 1])), declared)
    return "".join(lines[start - 1 : opened])


def _opens(line: str) -> bool:
    code = _TRAILING_COMMENT.sub("", line.rstrip())
    return code.endswith(":") or "{" in code


def _walk(
    symbols: Sequence[Symbol], around: tuple[Symbol, ...] = ()
) -> Iterator[tuple[Symbol, tuple[Symbol, ...]]]:
    """Each symbol with the definitions enclosing it (outermost first), depth first."""
    for symbol in symbols:
        yield symbol, around
        yield from _walk(symbol.children, (*around, symbol))


def _by_last(qualified: Iterable[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for fq in qualified:
        grouped[fq.rpartition(".")[2]].append(fq)
    return grouped


def _distinct(found: Sequence[Definition]) -> list[Definition]:
    return list(dict.fromkeys(found))
