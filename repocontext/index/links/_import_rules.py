"""Per-language import resolution rules behind :func:`.resolve.resolve_imports`.

Each rule maps (importing path, import, repository files, importing language) to hits: (target
path, reason, names). Rules only look paths up in the precomputed indexes of ``RepoFiles``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from repocontext.index.links.repo_files import RepoFiles, ancestors_of, stem
from repocontext.index.model import ImportRef
from repocontext.index.parsing.languages import is_test_path

TS_EXTENSION_ORDER: Final = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
JS_EXTENSION_ORDER: Final = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".d.ts", ".mts", ".cts")
C_HEADERS: Final = (".h", ".hh", ".hpp", ".hxx", ".h++")
C_SOURCES: Final = (".c", ".cc", ".cpp", ".cxx")
# A TypeScript ESM import names the compiled file (./x.js) of its source (./x.ts).
_JS_TO_TS: Final = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}

Hit = tuple[str, str, tuple[str, ...]]
Rule = Callable[[str, ImportRef, RepoFiles, str], list[Hit]]


def _python(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    written = "." * ref.level + ref.spec
    if ref.level:
        package = _parent(_dir(path), ref.level - 1)
        roots: Iterable[str] = () if package is None else (package,)
    else:
        roots = files.python_roots.get(_dir(path), ("", "src"))
    module = ref.spec.replace(".", "/")
    first = module.partition("/")[0]
    names = [n for n in ref.names if n != "*"]
    for root in roots:
        if not ref.level and _join(root, first) not in files.python_prefixes:
            continue  # cheap rejection of stdlib and third-party imports
        key = _join(root, module)
        hits: list[Hit] = []
        leftover: list[str] = []
        for name in names:
            target = files.python_modules.get(_join(key, name))
            if target is None:
                leftover.append(name)
            else:
                sep = "" if written.endswith(".") else "."
                hits.append((target, f"python import {written}{sep}{name}", ()))
        base = files.python_modules.get(key)
        if base is not None and (leftover or not names):
            hits.append((base, f"python import {written}", tuple(leftover)))
        if hits:
            return hits
    return []


def third_party_names(path: str, imports: Iterable[ImportRef], files: RepoFiles) -> set[str]:
    """The names a Python file takes from modules that are not in the repository.

    ``from copy import copy`` or ``import numpy.linalg``: the imported names and the
    module's segments (``copy``; ``numpy``, ``linalg``) name the library's things, never the
    repository's own ``copy``. An import is third-party when its first segment names no
    directory or module anywhere in the repository (a package under ``lib/`` that import
    resolution does not reach is still the repository's).
    """
    found: set[str] = set()
    for ref in imports:
        if ref.kind != "python" or ref.level:
            continue
        if ref.spec.partition(".")[0] in files.python_names:
            continue
        found.update(ref.spec.split("."))
        found.update(name for name in ref.names if name != "*")
    return found


def _js(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    spec = ref.spec
    if not (spec in (".", "..") or spec.startswith(("./", "../"))):
        return _js_package(ref, files, language)
    base = _normalize(_join(_dir(path), spec))
    if base is None:
        return []
    order = JS_EXTENSION_ORDER if language == "javascript" else TS_EXTENSION_ORDER
    found = _first(files, _js_candidates(base, order))
    if found is None:
        return []
    arrow = "" if found == base else f" -> {_base(found)}"
    return [(found, f"js {spec}{arrow}", tuple(n for n in ref.names if n != "*"))]


def _js_package(ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    """A package of the repository imported by its name (``zod``, ``@acme/ui/button``).

    Its ``package.json`` names the directory; the subpath (or ``index``) is looked for there,
    then under its ``src/`` and ``lib/`` (where the sources of a built package live).
    """
    parts = ref.spec.split("/")
    split = 2 if ref.spec.startswith("@") else 1
    directory = files.js_packages.get("/".join(parts[:split]))
    if directory is None or ".." in parts[split:]:  # (a subpath stays in its package)
        return []
    order = JS_EXTENSION_ORDER if language == "javascript" else TS_EXTENSION_ORDER
    sub = "/".join(parts[split:]) or "index"
    for root in (directory, _join(directory, "src"), _join(directory, "lib")):
        base = _normalize(_join(root, sub))
        found = None if base is None else _first(files, _js_candidates(base, order))
        if found is not None:
            names = tuple(n for n in ref.names if n != "*")
            return [(found, f"js {ref.spec} (package {directory or '.'})", names)]
    return []


def _js_candidates(base: str, order: tuple[str, ...]) -> Iterator[str]:
    """The specifier as written, its TypeScript source, then extensions, then index files."""
    yield base
    stem, ext = posixpath.splitext(base)
    yield from (stem + swapped for swapped in _JS_TO_TS.get(ext, ()))
    yield from (base + extension for extension in order)
    index = _join(base, "index")
    yield from (index + extension for extension in order)


def _go(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    module = files.go_module
    if module is None or not (ref.spec == module or ref.spec.startswith(module + "/")):
        return []
    reason = f"go package {ref.spec}"
    return [(f, reason, ()) for f in files.go_packages.get(ref.spec[len(module) + 1 :], ())]


def _rust_mod(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    base = _join(_rust_children(path), ref.spec)
    found = _first(files, (base + ".rs", base + "/mod.rs"))
    return [] if found is None else [(found, f"rust mod {ref.spec}", ())]


def _rust_mod_path(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    """``#[path = "sys/unix.rs"] mod imp;``: relative to the declaring file's directory."""
    target = _normalize(_join(posixpath.dirname(path), ref.spec))
    if target is None or target not in files.paths:
        return []
    return [(target, f"rust mod path {ref.spec}", ())]


def _rust_use(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    anchor = _rust_anchor(path, _rust_path(ref.spec))
    if anchor is None:
        return []
    directory, rest = anchor
    first = ref.spec.split("::", 1)[0].strip()
    anchored = first in ("crate", "super")
    crate = files.rust_crates.get(first)
    if crate is not None:  # `use mini_redis::client` (a test, another crate of the workspace)
        directory, rest, anchored = _join(crate, "src"), _rust_path(ref.spec)[1:], True
    elif not anchored and first != "self" and _rust_target_root(path):
        return []  # an external crate
    # `use a::{b::C, d}` arrives as spec `a` with names `b::C`, `d`: each extends the path.
    tails = [tail for tail in map(_rust_path, ref.names) if tail] or [[]]
    hits: list[Hit] = []
    for tail in tails:
        found = _rust_longest(files, directory, [*rest, *tail], anchored=anchored)
        if found is not None and found != path and found not in (hit[0] for hit in hits):
            hits.append((found, f"rust use {ref.spec}", ()))
    return hits


def _rust_path(text: str) -> list[str]:
    """``a::b as c`` -> ``[a, b]``, dropping globs and ``self``."""
    segments = (s.strip() for s in text.split(" as ")[0].split("::"))
    return [s for s in segments if s not in ("", "*", "self")]


def _rust_longest(
    files: RepoFiles, directory: str, wanted: list[str], *, anchored: bool = False
) -> str | None:
    """The file of the longest module prefix of ``wanted`` below ``directory``.

    ``anchored`` (a path starting at ``crate`` or ``super``): with no prefix a file, the
    item is in the module of ``directory`` itself (``use crate::Buf`` is in ``lib.rs``,
    ``use super::Value`` in ``value/mod.rs``). A bare first segment is an external crate.
    """
    for k in range(len(wanted), 0, -1):
        base = _join(directory, "/".join(wanted[:k]))
        found = _first(files, (base + ".rs", base + "/mod.rs"))
        if found is not None:
            return found
    if not anchored:
        return None
    own = (_join(directory, "lib.rs"), _join(directory, "main.rs"), _join(directory, "mod.rs"))
    return _first(files, (directory + ".rs", *own) if directory else own)


def _java(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    spec = ref.spec.removeprefix("static ").strip()
    reason = f"java import {spec}"
    if spec.endswith(".*") or "*" in ref.names:
        spec = spec.removesuffix(".*")
        members = files.java_packages.get(spec, ())
        if members:
            return [(m, f"java import {spec}.*", ("*",)) for m in _visible(path, members)]
        # else a static wildcard: the members of class a.b.C
    parts = spec.split(".")
    for i in range(len(parts) - 1, 0, -1):
        package, name = ".".join(parts[:i]), parts[i]
        found = files.java_classes.get((package, name)) or _unique_suffix(
            files, "/".join(parts[: i + 1]) + ".java"
        )
        if found is not None:
            return [(target, reason, ()) for target in _visible(path, (found,))]
    return []


def _csharp(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    spec = ref.spec.rpartition("=")[2].strip().removeprefix("static ").strip()
    reason = f"csharp using {spec}"
    members = files.csharp_namespaces.get(spec)
    if members:  # (the whole namespace: names `*`, as a wildcard import)
        return [(m, reason, ("*",)) for m in _visible(path, members)]
    # `using static` or an alias of a type: `A.B.Type`, `A.B.Type<T>`, nested `A.B.Outer.Inner`
    # (the file is named after the outermost type; generic arguments may hold dots too).
    parts = spec.partition("<")[0].strip().split(".")
    for i in range(len(parts) - 1, 0, -1):
        members = files.csharp_namespaces.get(".".join(parts[:i]), ())
        hits: list[Hit] = [(m, reason, ()) for m in _visible(path, members) if stem(m) == parts[i]]
        if hits:
            return hits
    return []


def _visible(path: str, members: Iterable[str]) -> list[str]:
    """The package members a Java/C# file may link to: a test file sees them all, any other
    file only the non-test ones (a test declaring the production package is no dependency)."""
    if is_test_path(path):
        return list(members)
    return [m for m in members if not is_test_path(m)]


def _c_include(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    spec = ref.spec.strip('"<> ')
    if ref.system:
        # `<mylib/core.h>`: the one repository file ending so (a project's own headers on
        # its include path); a bare `<stdio.h>` or `<vector>` is the system's
        found = _unique_suffix(files, spec) if "/" in spec and ".." not in spec else None
        written = f"<{spec}>"
    else:
        local = _normalize(_join(_dir(path), spec))
        tail = posixpath.normpath(spec)
        while tail.startswith("../"):
            tail = tail[3:]
        found = local if local in files.paths else _unique_suffix(files, tail)
        written = f'"{spec}"'
    if found is None:
        return []
    hits: list[Hit] = [(found, f"c include {written}", ())]
    source = _c_source_of(found, files)
    if source is not None:  # what the header declares, its source file defines
        hits.append((source, f"c include {written} (its source {_base(source)})", ()))
    return hits


def _c_source_of(header: str, files: RepoFiles) -> str | None:
    """``x.c`` (``.cc``, ``.cpp``, ``.cxx``) beside header ``x.h``, else the only one anywhere."""
    base, ext = posixpath.splitext(header)
    if ext not in C_HEADERS:
        return None
    beside = _first(files, (base + source_ext for source_ext in C_SOURCES))
    if beside is not None:
        return beside
    name = _base(base)
    anywhere = [p for ext in C_SOURCES for p in files.by_basename.get(name + ext, ())]
    return anywhere[0] if len(anywhere) == 1 else None


def _ruby_require(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    name = ref.spec if ref.spec.endswith(".rb") else ref.spec + ".rb"
    ancestors = (*ancestors_of(_dir(path)), "")
    # `lib` is on the load path, then the root; RSpec and `rake test` add `spec` and `test`.
    libs = (*(_join(_join(a, "lib"), name) for a in ancestors), name)
    helpers = (_join(_join(a, d), name) for a in ancestors for d in ("spec", "test"))
    found = _first(files, libs) or _first(files, helpers)
    return [] if found is None else [(found, f"ruby require {ref.spec}", ())]


def _ruby_require_relative(path: str, ref: ImportRef, files: RepoFiles, language: str) -> list[Hit]:
    base = _normalize(_join(_dir(path), ref.spec))
    if base is None:
        return []
    found = _first(files, (base if base.endswith(".rb") else base + ".rb",))
    return [] if found is None else [(found, f"ruby require_relative {ref.spec}", ())]


RULES: Final[dict[str, Rule]] = {
    "python": _python,
    "js": _js,
    "js_export": _js,
    "go": _go,
    "rust_mod": _rust_mod,
    "rust_mod_path": _rust_mod_path,
    "rust_use": _rust_use,
    "java": _java,
    "csharp": _csharp,
    "c_include": _c_include,
    "ruby_require": _ruby_require,
    "ruby_require_relative": _ruby_require_relative,
}


def _dir(path: str) -> str:
    return path.rpartition("/")[0]


def _base(path: str) -> str:
    return path.rpartition("/")[2]


def _join(head: str, tail: str) -> str:
    return f"{head}/{tail}" if head and tail else head or tail


def _normalize(path: str) -> str | None:
    """Normalize a joined path; ``None`` when it leaves the repository."""
    normal = posixpath.normpath(path) if path else "."
    if normal == ".." or normal.startswith(("../", "/")):
        return None
    return "" if normal == "." else normal


def _parent(directory: str, levels: int) -> str | None:
    parts = directory.split("/") if directory else []
    return None if levels > len(parts) else "/".join(parts[: len(parts) - levels])


def _first(files: RepoFiles, candidates: Iterable[str]) -> str | None:
    return next((c for c in candidates if c in files.paths), None)


def _unique_suffix(files: RepoFiles, suffix: str) -> str | None:
    """The one path equal to or ending in ``/suffix``, if exactly one does."""
    named = files.by_basename.get(_base(suffix), ())
    matches = [p for p in named if p == suffix or p.endswith("/" + suffix)]
    return matches[0] if len(matches) == 1 else None


def _rust_children(path: str) -> str:
    """Directory holding the child modules of the module a Rust file defines.

    A crate root keeps them beside it: ``lib.rs``, ``main.rs`` and ``mod.rs``, and the roots
    of the other targets of a package (``build.rs``, ``tests/x.rs``, ``benches/x.rs``,
    ``examples/x.rs``, ``src/bin/x.rs``), whose ``mod common;`` is ``tests/common/mod.rs``.
    """
    directory = _dir(path)
    if stem(path) in ("lib", "main", "mod", "build") or _rust_target_root(path):
        return directory
    return _join(directory, stem(path))


def _rust_target_root(path: str) -> bool:
    """The root file of a test, bench, example or binary target of a Cargo package."""
    parts = path.split("/")[:-1]
    return bool(parts) and (
        (parts[-1] in ("tests", "benches", "examples") and "src" not in parts)
        or parts[-2:] == ["src", "bin"]
    )


def _rust_anchor(path: str, segments: list[str]) -> tuple[str, list[str]] | None:
    """Directory a ``use`` path starts from, and the segments left to resolve."""
    if not segments:
        return None
    if segments[0] == "crate":
        parts = _dir(path).split("/")
        root = len(parts) - parts[::-1].index("src") if "src" in parts else len(parts)
        return "/".join(parts[:root]), segments[1:]
    # `self::` was dropped by _rust_path: it and a bare first segment start at this module.
    directory, i = _rust_children(path), 0
    while i < len(segments) and segments[i] == "super":
        if not directory:
            return None
        directory = _dir(directory)
        i += 1
    return directory, segments[i:]
