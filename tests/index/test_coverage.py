"""Covering tests: which test files exercise a source file, by imports, references and naming."""

from repocontext.index.links.coverage import covering_tests
from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.links.resolve import resolve_imports
from repocontext.index.model import Link
from tests.index.outline_builders import CS_PACKAGES, imp, outline


def test_covering_test_merges_import_reference_and_naming_strongest_first() -> None:
    links = [
        Link(
            "tests/test_util.py", "pkg/util.py", "reference", "references symbol parse", ("parse",)
        ),
        Link("tests/test_util.py", "pkg/util.py", "import", "python import pkg.util"),
    ]
    covered = covering_tests(links, ["pkg/util.py", "tests/test_util.py"])
    assert covered == {
        "pkg/util.py": [
            Link(
                "tests/test_util.py",
                "pkg/util.py",
                "test",
                "test imports pkg/util.py; test references parse; naming test_util.py",
                ("parse",),
            )
        ]
    }


def test_a_namespace_wide_import_covers_only_beside_other_evidence() -> None:
    spec = "Acme.Core.Tests/ParserTests.cs"
    files = ["Acme.Core/Parser.cs", "Acme.Core/Lexer.cs", spec]
    using = [  # `using Acme.Core;` reaches every file of the namespace
        Link(spec, target, "import", "csharp using Acme.Core", ("*",)) for target in files[:2]
    ]
    uses = Link(spec, "Acme.Core/Parser.cs", "reference", "references symbol Parser", ("Parser",))
    covered = covering_tests([*using, uses], files)
    assert covered["Acme.Core/Lexer.cs"] == []  # imported with the namespace, nothing used
    assert [link.reason for link in covered["Acme.Core/Parser.cs"]] == [
        "test imports Acme.Core/Parser.cs; test references Parser; naming ParserTests.cs"
    ]
    csharp = RepoFiles.build(CS_PACKAGES, packages=CS_PACKAGES)
    out = outline("csharp", imp("Acme.Core", "csharp"), imp("R = Acme.Core.Text.Rope", "csharp"))
    names = {
        link.target: link.names for link in resolve_imports("Acme.App/Program.cs", out, csharp)
    }
    assert names == {
        "Acme.Core/Lexer.cs": ("*",),
        "Acme.Core/Parser.cs": ("*",),
        "Acme.Core/Text/Rope.cs": (),  # one type: a real import
    }


def test_every_source_file_is_listed_and_non_test_links_do_not_cover() -> None:
    links = [
        Link("app.py", "pkg/util.py", "import", "python import pkg.util"),
        Link("tests/test_misc.py", "app.py", "test", "naming test_app.py"),
    ]
    files = ["app.py", "pkg/util.py", "README.md", "tests/test_misc.py", "tests/conftest.py"]
    covered = covering_tests(links, files)
    assert covered == {"app.py": [], "pkg/util.py": []}


def test_naming_conventions_cover_files_in_every_language() -> None:
    pairs = {
        "pkg/test_cache.py": "pkg/cache.py",
        "tests/unit/store_test.py": "src/store.py",
        "server/handler_test.go": "server/handler.go",
        "web/src/button.test.tsx": "web/src/button.tsx",
        "web/src/__tests__/form.spec.ts": "web/src/form.ts",
        "src/test/java/com/acme/ParserTest.java": "src/main/java/com/acme/Parser.java",
        "Acme.Core.Tests/LexerTests.cs": "Acme.Core/Lexer.cs",
        "spec/models/user_spec.rb": "app/models/user.rb",
        "test/test_widget.rb": "lib/widget.rb",
        "test/Polly.Specs/PolicySpecs.cs": "src/Polly/Policy.cs",
        "test/format-test.cc": "src/format.cc",
        "tests/test_sds.c": "src/sds.c",
        "web/src/client.test.mts": "web/src/client.mts",
    }
    covered = covering_tests([], [*pairs, *pairs.values()])
    found = {link.source: link.target for links in covered.values() for link in links}
    assert found == pairs
    assert covered["server/handler.go"][0].reason == "naming handler_test.go"


def test_naming_prefers_the_mirrored_directory_and_skips_ties_without_one() -> None:
    files = ["src/a/util.py", "src/b/util.py", "tests/a/test_util.py", "tests/test_util.py"]
    covered = covering_tests([], files)
    assert [link.source for link in covered["src/a/util.py"]] == ["tests/a/test_util.py"]
    assert covered["src/b/util.py"] == []


def test_go_naming_only_covers_a_file_in_the_same_directory() -> None:
    covered = covering_tests([], ["server/handler.go", "other/handler_test.go"])
    assert covered == {"server/handler.go": []}


def test_rust_integration_tests_cover_the_module_they_are_named_after_in_their_crate() -> None:
    files = [
        "src/server.rs",
        "src/bin/server.rs",  # deeper: src/server.rs is the module
        "src/clients/client.rs",
        "src/buf/mod.rs",
        "tests/server.rs",
        "tests/client.rs",
        "tests/test_buf.rs",
        "tests/integration.rs",  # names no module
        "other/src/codec.rs",
        "other/tests/codec_tests.rs",
        "other/tests/client.rs",  # another crate's client: not this crate's
        "a/util.rs",
        "b/util.rs",
        "tests/util.rs",  # two modules `util`, neither under src/
        "src/cli/mod.rs",
        "tests/cli/main.rs",  # a test of several files, named by its directory
        "tests/cli/helpers.rs",
        "src/main.rs",
        "tests/main.rs",  # the crate's root is no module a test is named after
    ]
    covered = covering_tests([], files)
    found = {link.source: link.target for links in covered.values() for link in links}
    assert found == {
        "tests/server.rs": "src/server.rs",
        "tests/client.rs": "src/clients/client.rs",
        "tests/test_buf.rs": "src/buf/mod.rs",
        "other/tests/codec_tests.rs": "other/src/codec.rs",
        "tests/cli/main.rs": "src/cli/mod.rs",
    }
    assert covered["src/server.rs"][0].reason == "naming server.rs"
