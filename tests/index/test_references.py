"""Reference links: names a file uses that exactly one other file of its language defines."""

from repocontext.index.links.references import (
    MAX_DEFINING_FILES,
    build_symbol_index,
    reference_links,
)
from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.links.resolve import link_repository
from repocontext.index.model import FileOutline, ImportRef, Link, Symbol
from repocontext.index.parsing.parser import parse_outline
from tests.index.outline_builders import imp, outline


def fn(name: str, *children: Symbol, kind: str = "function") -> Symbol:
    return Symbol(kind, name, name, f"def {name}()", 1, 2, children)


def test_symbol_index_holds_nested_names_and_skips_impl_blocks() -> None:
    outlines = {
        "a.rs": FileOutline("rust", symbols=(fn("Parser", kind="struct"),)),
        "b.rs": FileOutline("rust", symbols=(fn("Parser", fn("parse_all"), kind="impl"),)),
    }
    assert build_symbol_index(outlines) == {
        "Parser": frozenset({"a.rs"}),
        "parse_all": frozenset({"b.rs"}),
    }


def test_a_functions_nested_helpers_are_local_and_define_no_name() -> None:
    outlines = {
        "app.py": FileOutline(
            "python",
            symbols=(
                fn("main", fn("tokenize"), fn("Local", fn("run"), kind="class")),
                fn("Store", fn("get", fn("cached")), kind="class"),
            ),
        )
    }
    assert sorted(build_symbol_index(outlines)) == ["Store", "get", "main"]
    # C and C++ have no local definitions: a "function" holding a class is a macro that
    # broke the parse (`FMT_CONSTEXPR auto f() ->`), and the class is still the file's
    broken = {"fmt.h": FileOutline("cpp", symbols=(fn("get", fn("buffer", kind="class")),))}
    assert sorted(build_symbol_index(broken)) == ["buffer", "get"]


def test_a_name_defined_in_exactly_one_other_file_makes_a_reference_link() -> None:
    index = {"tokenize": frozenset({"lex.py"}), "Lexer": frozenset({"lex.py", "app.py"})}
    links = reference_links("app.py", outline("python", refs=("Lexer", "tokenize")), index)
    assert links == [
        Link(
            "app.py",
            "lex.py",
            "reference",
            "references symbols Lexer, tokenize",
            ("Lexer", "tokenize"),
        )
    ]


def test_references_only_reach_files_of_the_same_language_family() -> None:
    index = {"Widget": frozenset({"ui/widget.js", "App.java"}), "Parser": frozenset({"p.hpp"})}
    ts = reference_links("ui/app.tsx", outline("tsx", refs=("Widget",)), index)
    c = reference_links("main.c", outline("c", refs=("Parser",)), index)
    cs = reference_links("Program.cs", outline("csharp", refs=("Widget", "Parser")), index)
    assert [link.target for link in ts + c] == ["ui/widget.js", "p.hpp"]
    assert cs == []


def test_an_ambiguous_name_links_only_to_the_defining_files_it_imports() -> None:
    index = {"render": frozenset({"a.py", "b.py", "c.py"})}
    out = outline("python", refs=("render",))
    assert reference_links("app.py", out, index) == []
    assert reference_links("app.py", out, index, imported={"b.py"}) == [
        Link("app.py", "b.py", "reference", "references symbol render", ("render",))
    ]


def test_a_file_that_is_not_a_test_never_links_to_a_test_files_names() -> None:
    index = {"fake_download": frozenset({"tests/test_api.py"}), "download": frozenset({"api.py"})}
    refs = ("fake_download", "download")
    source = reference_links("client.py", outline("python", refs=refs), index)
    test = reference_links("tests/test_client.py", outline("python", refs=refs), index)
    assert [link.target for link in source] == ["api.py"]
    assert [link.target for link in test] == ["api.py", "tests/test_api.py"]
    # a test's definition still makes a name ambiguous: `getName` of a fake is no reason to
    # link every caller of some other getName to the one source file that defines it
    both = {"getName": frozenset({"src/Field.java", "test/FakeField.java"})}
    calls = outline("java", refs=("getName",))
    assert reference_links("src/Policy.java", calls, both) == []


def test_library_files_never_link_to_names_defined_in_examples() -> None:
    index = {"handleUser": frozenset({"examples/mvc/index.js"})}
    refs = outline("javascript", refs=("handleUser",))
    assert reference_links("lib/response.js", refs, index) == []
    demo = reference_links("examples/mvc/app.js", refs, index)
    assert [link.target for link in demo] == ["examples/mvc/index.js"]


def test_go_references_reach_only_the_own_and_imported_packages() -> None:
    index = {"Render": frozenset({"view/render.go"}), "timer": frozenset({"mock/timer.go"})}
    refs = outline("go", refs=("Render", "timer"))
    assert reference_links("assert/a.go", refs, index) == []
    imported = reference_links("assert/a.go", refs, index, imported=["view/render.go"])
    same_package = reference_links("mock/mock.go", refs, index)
    assert [link.target for link in imported] == ["view/render.go"]
    assert [link.target for link in same_package] == ["mock/timer.go"]


def test_c_references_through_a_header_also_reach_its_source_file() -> None:
    index = {"sds_new": frozenset({"include/sds.h", "src/sds.c"})}
    caller = outline("c", refs=("sds_new",))
    via_header = reference_links("app.c", caller, index, imported=["include/sds.h"])
    assert [link.target for link in via_header] == ["include/sds.h", "src/sds.c"]


def test_c_header_and_source_of_one_stem_are_one_definer_without_an_include() -> None:
    # test.c reaches sds.h only through hiredis.h: the pair still counts as one definition.
    pair = {"sds_new": frozenset({"include/sds.h", "src/sds.c"})}
    caller = outline("c", refs=("sds_new",))
    assert [link.target for link in reference_links("test.c", caller, pair)] == [
        "include/sds.h",
        "src/sds.c",
    ]
    for definers in (  # two sources, or two headers, or a third file: ambiguous, no link
        {"include/sds.h", "src/sds.c", "vendor/sds.c"},
        {"a/sds.c", "b/sds.c"},
        {"include/sds.h", "src/sds.h"},
        {"include/sds.h", "src/other.c"},
    ):
        index = {"sds_new": frozenset(definers)}
        assert reference_links("test.c", caller, index) == [], definers


def test_names_defined_in_too_many_files_make_no_reference_link() -> None:
    many = frozenset(f"m{i}.py" for i in range(MAX_DEFINING_FILES + 1))
    index = {"handler": many, "handle": many - {"m0.py"}}
    links = reference_links("app.py", outline("python", refs=("handle", "handler")), index, many)
    assert {link.names for link in links} == {("handle",)}


def test_names_a_python_file_imports_from_third_party_modules_make_no_reference_link() -> None:
    files = RepoFiles.build(["app.py", "lib/copying.py", "lib/__init__.py", "lib/versions.py"])
    index = {
        "copy": frozenset({"lib/copying.py"}),
        "get_version": frozenset({"lib/versions.py"}),
        "linalg": frozenset({"lib/copying.py"}),
    }
    imports = (
        ImportRef("copy", "python", 1, names=("copy",)),  # the standard library's
        ImportRef("themes", "python", 2, names=("get_version",)),  # a third-party package
        ImportRef("numpy.linalg", "python", 3),
        ImportRef("lib", "python", 4, names=("versions",)),  # the repository's own
    )
    out = FileOutline("python", imports=imports, references=("copy", "get_version", "linalg"))
    assert reference_links("app.py", out, index, files=files) == []
    own = FileOutline(
        "python", imports=(ImportRef("lib.versions", "python", 1),), references=("get_version",)
    )
    links = reference_links("app.py", own, index, files=files)
    assert [link.target for link in links] == ["lib/versions.py"]
    # a package of the repository that import resolution does not reach is still its own
    nested = RepoFiles.build(
        ["tests/test_engine.py", "lib/barpkg/__init__.py", "lib/barpkg/engine.py"]
    )
    unresolved = FileOutline(
        "python",
        imports=(ImportRef("barpkg.engine", "python", 1, names=("ignite",)),),
        references=("ignite",),
    )
    engine = {"ignite": frozenset({"lib/barpkg/engine.py"})}
    found = reference_links("tests/test_engine.py", unresolved, engine, files=nested)
    assert [link.target for link in found] == ["lib/barpkg/engine.py"]
    assert [link.target for link in reference_links("app.py", out, index)] == [
        "lib/copying.py",  # (without the file set nothing is known about the imports)
        "lib/versions.py",
    ]


def test_short_and_stoplisted_names_make_no_reference_link() -> None:
    index = {name: frozenset({"lib.py"}) for name in ("id", "get", "Value", "parse_row")}
    out = outline("python", refs=("id", "get", "Value", "parse_row"))
    assert [link.names for link in reference_links("app.py", out, index)] == [("parse_row",)]


def test_many_names_to_one_file_are_summarised_in_the_reason() -> None:
    names = ("alpha", "beta", "delta", "gamma", "omega")
    links = reference_links("app.py", outline("go", refs=names), {n: {"lib.go"} for n in names})
    assert links[0].reason == "references symbols alpha, beta, delta (+2 more)"
    assert links[0].names == names


def test_link_repository_uses_imports_to_disambiguate_references() -> None:
    outlines = {
        "app.py": outline("python", imp("b", "python"), refs=("render", "only_a")),
        "a.py": FileOutline("python", symbols=(fn("render"), fn("only_a"))),
        "b.py": FileOutline("python", symbols=(fn("render"),)),
    }
    links = link_repository(outlines, RepoFiles.build(outlines))
    assert [(x.source, x.target, x.kind, x.names) for x in links] == [
        ("app.py", "b.py", "import", ()),
        ("app.py", "a.py", "reference", ("only_a",)),
        ("app.py", "b.py", "reference", ("render",)),
    ]


def test_a_method_is_reached_only_by_a_file_using_its_name_as_a_member() -> None:
    sources = {
        "provider.py": "class Provider:\n    def response(self):\n        pass\n",
        "views.py": "def show(client):\n    response = client.get()\n    return response\n",
        "api.py": "def handle(provider):\n    return provider.response()\n",
        # a function and a method of one name: still ambiguous for a bare use, no link
        "requests.py": "def request(method):\n    pass\n",
        "session.py": "class Session:\n    def request(self):\n        pass\n",
        "cookies.py": "def wrap(request):\n    return request\n",
        # a Go method (outlined at file level) is a member too
        "server.go": "package p\n\nfunc (s *Server) Restart() {}\n",
        "cli.go": "package p\n\nfunc run(Restart bool) { _ = Restart }\n",
        # languages whose inherited methods are called bare are not concerned
        "Base.java": "class Base { void reload() {} }\n",
        "Child.java": "class Child extends Base { void go() { reload(); } }\n",
    }
    languages = {".java": "java", ".go": "go", ".py": "python"}
    outlines = {
        path: parse_outline(languages[path[path.rindex(".") :]], text.encode(), path)
        for path, text in sources.items()
    }
    links = link_repository(outlines, RepoFiles.build(outlines))
    assert [(x.source, x.target, x.names) for x in links if x.kind == "reference"] == [
        ("Child.java", "Base.java", ("Base", "reload")),
        ("api.py", "provider.py", ("response",)),
    ]
