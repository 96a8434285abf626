"""Outlines per language against hand-checked fixtures, module names and parser robustness."""

import json
import threading
from pathlib import Path

import pytest

from repocontext.errors import RepoContextError, UnsupportedLanguageError
from repocontext.index.model import FileOutline, ImportRef, Symbol
from repocontext.index.parsing.languages import LANGUAGES, language_for
from repocontext.index.parsing.parser import MAX_REFERENCES, module_name, parse_outline

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "languages"


def symbol_json(symbol: Symbol) -> dict:
    return {
        "kind": symbol.kind,
        "name": symbol.name,
        "fullyQualifiedName": symbol.fq_name,
        "signature": symbol.signature,
        "startLine": symbol.start_line,
        "endLine": symbol.end_line,
        "children": [symbol_json(child) for child in symbol.children],
    }


def import_json(ref: ImportRef) -> dict:
    return {
        "spec": ref.spec,
        "kind": ref.kind,
        "line": ref.line,
        "level": ref.level,
        "names": list(ref.names),
        "system": ref.system,
    }


def outline_json(outline: FileOutline) -> dict:
    return {
        "language": outline.language,
        "package": outline.package,
        "errors": outline.errors,
        "symbols": [symbol_json(symbol) for symbol in outline.symbols],
        "imports": [import_json(ref) for ref in outline.imports],
    }


def sample_of(language: str) -> Path:
    (sample,) = (FIXTURES / language).glob("sample.*")
    return sample


@pytest.mark.parametrize("language", LANGUAGES)
def test_outline_of_each_language_sample_matches_its_expected_json(language):
    sample = sample_of(language)
    expected = json.loads((FIXTURES / language / "expected.json").read_text())
    outline = parse_outline(language, sample.read_bytes(), sample.name)
    assert outline_json(outline) == expected


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_fixture_sample_is_named_for_its_language(language):
    assert language_for(sample_of(language).name) == language


@pytest.mark.parametrize("language", LANGUAGES)
def test_references_are_sorted_distinct_and_exclude_top_level_names(language):
    sample = sample_of(language)
    outline = parse_outline(language, sample.read_bytes(), sample.name)
    top_level = {symbol.name for symbol in outline.symbols}
    assert outline.references
    assert list(outline.references) == sorted(set(outline.references))
    assert top_level.isdisjoint(outline.references)


def test_python_references_include_used_names_but_none_the_file_defines():
    sample = sample_of("python")
    outline = parse_outline("python", sample.read_bytes(), sample.name)
    assert {"OrderedDict", "json", "loads", "self"} <= set(outline.references)
    # top-level, nested (a method) and local (a function's helper) definitions alike
    assert {"Inventory", "MAX_ITEMS", "describe", "build"}.isdisjoint(outline.references)


@pytest.mark.parametrize(
    ("language", "source", "kept", "bound"),
    [
        (
            "python",
            b"import numpy as np\nimport pkg.util as u\nfrom x import a as b, c\nnp.u.b(c)\n"
            b"from .app import Flask as Flask\n",  # (the re-export idiom: a use of Flask)
            {"numpy", "pkg", "util", "x", "a", "c", "Flask"},
            {"np", "u", "b"},
        ),
        (
            "typescript",
            b'import * as util from "./util.js";\nimport def, { a as b, c } from "./x";\n'
            b"util.f(b, c, def);\n",
            {"a", "c", "def", "f"},
            {"util", "b"},
        ),
        ("rust", b"use crate::a::b as c;\nfn f() { c(); }\n", {"a", "b"}, {"c"}),
    ],
)
def test_names_an_import_binds_under_an_alias_are_the_files_own(language, source, kept, bound):
    # `util` of `import * as util` is no use of another file's `util`
    references = set(parse_outline(language, source, "m.x").references)
    assert kept <= references and bound.isdisjoint(references)


def test_references_are_capped():
    source = "\n".join(f"value_{index:05d} = other_{index:05d}" for index in range(3000))
    outline = parse_outline("python", source.encode(), "big.py")
    assert len(outline.references) == MAX_REFERENCES
    assert outline.references[0] == "other_00000"


def test_unknown_language_raises_an_error_with_a_stable_code():
    with pytest.raises(UnsupportedLanguageError) as caught:
        parse_outline("cobol", b"IDENTIFICATION DIVISION.", "main.cob")
    assert isinstance(caught.value, RepoContextError)
    assert caught.value.code == "index.unsupported_language"
    assert caught.value.language == "cobol"


def test_file_with_syntax_errors_still_yields_symbols_and_reports_errors():
    source = b"class Broken(:\n    pass\n\ndef fine(x):\n    return x\n\ndef bad(:\n"
    outline = parse_outline("python", source, "pkg/broken.py")
    assert outline.errors is True
    assert "pkg.broken.fine" in {symbol.fq_name for symbol in outline.symbols}


def test_clean_file_reports_no_errors():
    outline = parse_outline("go", b"package main\n\nfunc main() {}\n", "cmd/app/main.go")
    assert outline.errors is False
    assert outline.package == "main"
    assert outline.symbols[0].fq_name == "cmd.app.main.main"


def test_non_utf8_bytes_do_not_crash_and_decode_with_replacement():
    source = b"# caf\xe9\nNAME = '\xff\xfe'\n\ndef run():  # \x80\n    return NAME\n"
    outline = parse_outline("python", source, "latin.py")
    assert [symbol.name for symbol in outline.symbols] == ["NAME", "run"]
    assert outline.symbols[1].signature == "def run():  # \ufffd"


def test_empty_source_gives_an_empty_outline():
    assert parse_outline("rust", b"", "src/lib.rs") == FileOutline(language="rust")


def test_signature_is_stripped_and_cut_at_200_characters():
    params = ", ".join(f"argument_{index}" for index in range(40))
    outline = parse_outline("python", f"class A:\n    def f({params}): pass\n".encode(), "m.py")
    (symbol,) = outline.symbols[0].children
    assert symbol.signature.startswith("def f(argument_0")
    assert len(symbol.signature) == 200


def test_python_package_init_names_the_package_and_dunder_main_keeps_its_name():
    outline = parse_outline("python", b"def f(): pass\n", "src/pkg/__init__.py")
    assert outline.symbols[0].fq_name == "src.pkg.f"
    assert module_name("src/pkg/__main__.py") == "src.pkg.__main__"


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("src/pkg/mod.py", "src.pkg.mod"),
        ("./lib/util.ts", "lib.util"),
        ("lib\\win.c", "lib.win"),
        ("types.d.ts", "types"),
        ("src/api.d.mts", "src.api"),
        ("a.d", "a"),
        ("Rakefile", "Rakefile"),
        (".eslintrc.js", ".eslintrc"),
        ("__init__.py", ""),
    ],
)
def test_module_name_is_the_path_without_extension_dotted(path, module):
    assert module_name(path) == module


def test_root_init_symbols_have_no_leading_dot():
    outline = parse_outline("python", b"class A: pass\n", "__init__.py")
    assert outline.symbols[0].fq_name == "A"


def test_parsers_work_from_several_threads():
    sample = sample_of("rust").read_bytes()
    expected = parse_outline("rust", sample, "sample.rs")
    results: list[FileOutline] = []
    lock = threading.Lock()

    def work():
        outline = parse_outline("rust", sample, "sample.rs")
        with lock:
            results.append(outline)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == [expected] * 4


def outline_of(language: str, source: str, path: str = "m") -> FileOutline:
    return parse_outline(language, source.encode(), path)


def flat(symbols: tuple[Symbol, ...]) -> list[tuple[str, str, int, int]]:
    found = []
    for symbol in symbols:
        found.append((symbol.kind, symbol.fq_name, symbol.start_line, symbol.end_line))
        found += flat(symbol.children)
    return found


def test_cpp_qualified_definitions_are_methods_named_without_template_arguments():
    source = (
        "Box<Pair<int, T>>::Inner<T>::get() {}\n"
        "bool Point::operator<(const Point &o) const { return true; }\n"
        "namespace a::b { void f(); }\n"
    )
    assert flat(outline_of("cpp", source).symbols) == [
        ("method", "m.Box.Inner.get", 1, 1),
        ("method", "m.Point.operator<", 2, 2),
        ("namespace", "m.a.b", 3, 3),
        ("function", "m.a.b.f", 3, 3),
    ]
    assert outline_of("cpp", source).symbols[2].name == "a::b"


def test_csharp_file_scoped_namespace_holds_the_rest_of_the_file():
    source = "namespace Acme.Tools;\n\nclass Hammer\n{\n    void Hit() {}\n}\n"
    outline = outline_of("csharp", source, "src/Hammer.cs")
    assert outline.package == "Acme.Tools"
    assert flat(outline.symbols) == [
        ("namespace", "src.Hammer.Acme.Tools", 1, 6),
        ("class", "src.Hammer.Acme.Tools.Hammer", 3, 6),
        ("method", "src.Hammer.Acme.Tools.Hammer.Hit", 5, 5),
    ]


def test_cpp_export_macros_in_class_heads_are_looked_past():
    source = (
        "class FMT_API file {\n public:\n  file() noexcept : fd_(-1) {}\n  void close();\n};\n"
        "template <typename T> struct TORCH_API Guard final : public Base<T> {\n  void f();\n};\n"
        "class EXPORT(core) Widget\n{\n};\n"
        "class RGB : public Color {\n};\n"
        "class ABC final {\n};\n"
        "class FWD_API Later;\n"
    )
    outline = outline_of("cpp", source)
    assert flat(outline.symbols) == [
        ("class", "m.file", 1, 5),
        ("method", "m.file.file", 3, 3),
        ("method", "m.file.close", 4, 4),
        ("struct", "m.Guard", 6, 8),
        ("method", "m.Guard.f", 7, 7),
        ("class", "m.Widget", 9, 11),
        ("class", "m.RGB", 12, 13),
        ("class", "m.ABC", 14, 15),
    ]
    assert outline.symbols[0].signature == "class FMT_API file {"  # as written


def test_catch2_and_doctest_cases_span_their_block_and_macro_lines_in_classes_are_no_methods():
    source = (
        'TEST_CASE("sizes", "[vec]") {\n  REQUIRE(1);\n  SECTION("grow") { REQUIRE(2); }\n}\n'
        'namespace {\nTEST_CASE_FIXTURE(Fix, "doctest") {\n  CHECK(x);\n}\n}\n'
        'SCENARIO("given") {\n}\n'
        "class W : public QObject {\n  Q_OBJECT\n  Q_PROPERTY(int v READ v)\npublic:\n"
        "  int v() const;\n  Q_DISABLE_COPY(W)\n  FRIEND_TEST(WTest, Works);\n  void GET();\n};\n"
        'void helper() {\n  check("x");\n  {\n  }\n}\n'
    )
    outline = outline_of("cpp", source)
    assert flat(outline.symbols) == [
        ("function", 'm.TEST_CASE("sizes", "[vec]")', 1, 4),
        ("function", 'm.TEST_CASE_FIXTURE(Fix, "doctest")', 6, 8),
        ("function", 'm.SCENARIO("given")', 10, 11),
        ("class", "m.W", 12, 20),
        ("method", "m.W.v", 16, 16),
        ("method", "m.W.GET", 19, 19),
        ("function", "m.helper", 21, 25),
    ]


def test_csharp_package_is_the_namespace_of_the_first_type_nested_blocks_joined():
    nested = "namespace Acme {\n  namespace Tools.Power {\n    class Drill {}\n  }\n}\n"
    outer_first = "namespace Acme {\n  class Hammer {}\n  namespace Tools { class Saw {} }\n}\n"
    no_type = "namespace Acme {\n  namespace Empty {\n  }\n}\n"
    assert outline_of("csharp", nested).package == "Acme.Tools.Power"
    assert outline_of("csharp", outer_first).package == "Acme"
    assert outline_of("csharp", no_type).package == "Acme.Empty"


def test_rust_mod_with_a_path_attribute_is_a_path_import():
    source = '#[cfg(unix)]\n#[path = "sys/unix.rs"]\nmod imp;\n#[cfg(test)]\nmod tests;\n'
    refs = outline_of("rust", source).imports
    assert [(ref.spec, ref.kind, ref.line) for ref in refs] == [
        ("sys/unix.rs", "rust_mod_path", 3),
        ("tests", "rust_mod", 5),
    ]


def test_rust_use_forms_split_into_path_and_names():
    source = "use y as z;\nuse {m, n};\nuse a::b::*;\nuse c::{d::{e, f}, g as h};\n"
    refs = outline_of("rust", source).imports
    assert [(ref.spec, ref.names) for ref in refs] == [
        ("y", ()),
        ("", ("m", "n")),
        ("a::b", ("*",)),
        ("c", ("d::{e, f}", "g")),
    ]


def test_go_receivers_and_rust_impls_are_named_after_the_bare_type():
    go = outline_of("go", "package p\nfunc (b Box[T]) Get() T { return b.v }\n")
    assert flat(go.symbols) == [("method", "m.Box.Get", 2, 2)]
    rust = outline_of("rust", "impl<T> crate::Wrapper<T> {\n    fn new() {}\n}\n")
    assert flat(rust.symbols) == [("impl", "m.Wrapper", 1, 3), ("method", "m.Wrapper.new", 2, 2)]


def test_c_prototypes_in_preprocessor_conditionals_are_file_level_and_local_ones_are_not():
    source = (
        "#ifndef UTIL_H\n"
        "#define UTIL_H\n"
        "int util_add(int a, int b);\n"
        "#ifdef UTIL_NAMES\n"
        "char *util_name(int code);\n"
        "#elif defined(UTIL_CODES)\n"
        "int util_code(const char *name);\n"
        "#else\n"
        "void util_none(void);\n"
        "#endif\n"
        "#ifdef __cplusplus\n"
        'extern "C" {\n'
        "#endif\n"
        "int util_c(void);\n"
        "#ifdef __cplusplus\n"
        "}\n"
        "#endif\n"
        "static inline int util_sub(int a, int b)\n"
        "{\n"
        "    int util_neg(int);\n"
        "#if UTIL_CHECKED\n"
        "    int util_check(int);\n"
        "#endif\n"
        "    return util_add(a, util_neg(b));\n"
        "}\n"
        "#endif\n"
    )
    outline = outline_of("c", source, "include/util.h")
    assert outline.symbols[1] == Symbol(
        "function", "util_add", "include.util.util_add", "int util_add(int a, int b);", 3, 3
    )
    assert flat(outline.symbols) == [
        ("macro", "include.util.UTIL_H", 2, 2),
        ("function", "include.util.util_add", 3, 3),
        ("function", "include.util.util_name", 5, 5),
        ("function", "include.util.util_code", 7, 7),
        ("function", "include.util.util_none", 9, 9),
        ("function", "include.util.util_c", 14, 14),
        ("function", "include.util.util_sub", 18, 25),
    ]
    # The header defines the names it declares rather than referring to them.
    assert {"util_add", "util_name", "util_c"}.isdisjoint(outline.references)
    assert {"util_neg", "util_check"} <= set(outline.references)


def test_cpp_prototypes_in_extern_c_namespaces_and_conditionals_are_outlined():
    source = (
        'extern "C" {\n'
        "int c_open(const char *path);\n"
        "#if defined(C_CLOSE)\n"
        "void c_close(int fd);\n"
        "#endif\n"
        "}\n"
        'extern "C" int c_flush(int fd);\n'
        "namespace io {\n"
        "#ifdef IO_STREAMS\n"
        "std::ostream &out();\n"
        "class File {\n"
        "#if IO_SEEK\n"
        "    long seek(long to);\n"
        "    File(int fd);\n"
        "#endif\n"
        "};\n"
        "#endif\n"
        "}\n"
        "int &counter();\n"
        "void run() {\n"
        "#ifdef IO_LOCAL\n"
        "    int local(int);\n"
        "#endif\n"
        "}\n"
    )
    outline = outline_of("cpp", source, "io.hpp")
    assert flat(outline.symbols) == [
        ("function", "io.c_open", 2, 2),
        ("function", "io.c_close", 4, 4),
        ("function", "io.c_flush", 7, 7),
        ("namespace", "io.io", 8, 18),
        ("function", "io.io.out", 10, 10),
        ("class", "io.io.File", 11, 16),
        ("method", "io.io.File.seek", 13, 13),
        ("method", "io.io.File.File", 14, 14),
        ("function", "io.counter", 19, 19),
        ("function", "io.run", 20, 24),
    ]
