"""Imports resolved through packages: Go modules, Java packages, C# namespaces, published names."""

from repocontext.index.links.repo_files import RepoFiles
from tests.index.outline_builders import CS_PACKAGES, imp, outline, resolved

# --- Go -----------------------------------------------------------------------------------------

GO = RepoFiles.build(
    [
        "go.mod",
        "main.go",
        "cmd/tool/main.go",
        "pkg/sub/a.go",
        "pkg/sub/b.go",
        "pkg/sub/a_test.go",
        "pkg/sub/notes.md",
        "pkg/sub/deeper/c.go",
    ],
    packages={"pkg/sub/a.go": "sub", "main.go": "main"},
    go_mod_module="example.com/m/",
)


def test_go_import_under_the_module_links_every_non_test_go_file_of_the_package() -> None:
    out = outline("go", imp("example.com/m/pkg/sub", "go"), imp("fmt", "go"))
    assert resolved("cmd/tool/main.go", out, GO) == {
        "pkg/sub/a.go": "go package example.com/m/pkg/sub",
        "pkg/sub/b.go": "go package example.com/m/pkg/sub",
    }


def test_go_import_of_the_module_root_and_of_other_modules() -> None:
    out = outline("go", imp("example.com/m", "go"), imp("example.com/mother/pkg", "go"))
    assert list(resolved("cmd/tool/main.go", out, GO)) == ["main.go"]


def test_go_imports_make_no_link_without_a_module_path() -> None:
    files = RepoFiles.build(["pkg/sub/a.go", "main.go"])
    assert resolved("main.go", outline("go", imp("example.com/m/pkg/sub", "go")), files) == {}


# --- Java and C# --------------------------------------------------------------------------------

JAVA_PACKAGES = {
    "src/main/java/com/acme/util/Strings.java": "com.acme.util",
    "src/main/java/com/acme/util/Numbers.java": "com.acme.util",
    "src/main/java/com/acme/other/Strings.java": "com.acme.other",
    "src/main/java/com/acme/App.java": "com.acme",
}
JAVA = RepoFiles.build(JAVA_PACKAGES, packages=JAVA_PACKAGES)
APP_JAVA = "src/main/java/com/acme/App.java"


def test_java_import_resolves_the_class_file_of_the_declared_package() -> None:
    out = outline("java", imp("com.acme.util.Strings", "java"), imp("java.util.List", "java"))
    assert resolved(APP_JAVA, out, JAVA) == {
        "src/main/java/com/acme/util/Strings.java": "java import com.acme.util.Strings"
    }


def test_java_wildcard_import_links_every_file_of_the_package() -> None:
    out = outline("java", imp("com.acme.util", "java", "*"))  # how the parser reports `a.b.*`
    assert resolved(APP_JAVA, out, JAVA) == {
        "src/main/java/com/acme/util/Numbers.java": "java import com.acme.util.*",
        "src/main/java/com/acme/util/Strings.java": "java import com.acme.util.*",
    }
    written = outline("java", imp("com.acme.util.*", "java"))
    assert resolved(APP_JAVA, written, JAVA) == resolved(APP_JAVA, out, JAVA)


def test_java_static_and_nested_imports_resolve_to_the_outer_class_file() -> None:
    out = outline("java", imp("com.acme.other.Strings.join", "java"))
    glob = outline("java", imp("com.acme.util.Numbers", "java", "*"))
    assert list(resolved(APP_JAVA, out, JAVA)) == ["src/main/java/com/acme/other/Strings.java"]
    assert list(resolved(APP_JAVA, glob, JAVA)) == ["src/main/java/com/acme/util/Numbers.java"]


def test_java_import_falls_back_to_the_path_when_no_package_is_known() -> None:
    files = RepoFiles.build(["java/org/x/Tool.java", "java/org/x/Main.java"])
    out = outline("java", imp("org.x.Tool", "java"))
    assert list(resolved("java/org/x/Main.java", out, files)) == ["java/org/x/Tool.java"]


MAVEN_PACKAGES = {
    "src/main/java/com/acme/model/Account.java": "com.acme.model",
    "src/main/java/com/acme/model/Ledger.java": "com.acme.model",
    "src/test/java/com/acme/model/Ledger.java": "com.acme.model",  # a test double, same class
    "src/test/java/com/acme/model/AccountTest.java": "com.acme.model",
    "src/test/java/com/acme/model/Fixtures.java": "com.acme.model",
    "src/main/java/com/acme/app/Main.java": "com.acme.app",
    "src/test/java/com/acme/app/MainTest.java": "com.acme.app",
}
MAVEN = RepoFiles.build(MAVEN_PACKAGES, packages=MAVEN_PACKAGES)
MAIN_JAVA = "src/main/java/com/acme/app/Main.java"
MAIN_TEST_JAVA = "src/test/java/com/acme/app/MainTest.java"


def test_java_imports_of_non_test_files_never_reach_test_files_of_the_package() -> None:
    wildcard = outline("java", imp("com.acme.model", "java", "*"))
    assert list(resolved(MAIN_JAVA, wildcard, MAVEN)) == [
        "src/main/java/com/acme/model/Account.java",
        "src/main/java/com/acme/model/Ledger.java",
    ]
    classes = outline(
        "java", imp("com.acme.model.Ledger", "java"), imp("com.acme.model.Fixtures", "java")
    )
    assert list(resolved(MAIN_JAVA, classes, MAVEN)) == ["src/main/java/com/acme/model/Ledger.java"]


def test_java_imports_of_test_files_reach_the_whole_package_tests_included() -> None:
    wildcard = outline("java", imp("com.acme.model", "java", "*"))
    assert list(resolved(MAIN_TEST_JAVA, wildcard, MAVEN)) == sorted(
        p for p, package in MAVEN_PACKAGES.items() if package == "com.acme.model"
    )
    helper = outline("java", imp("com.acme.model.Fixtures", "java"))
    assert list(resolved(MAIN_TEST_JAVA, helper, MAVEN)) == [
        "src/test/java/com/acme/model/Fixtures.java"
    ]


CS = RepoFiles.build(CS_PACKAGES, packages=CS_PACKAGES)


def test_csharp_using_links_every_file_of_the_namespace_only() -> None:
    out = outline("csharp", imp("Acme.Core", "csharp"), imp("System.Linq", "csharp"))
    assert resolved("Acme.App/Program.cs", out, CS) == {
        "Acme.Core/Lexer.cs": "csharp using Acme.Core",
        "Acme.Core/Parser.cs": "csharp using Acme.Core",
    }


def test_csharp_using_static_and_alias_resolve_the_type_file() -> None:
    out = outline("csharp", imp("Acme.Core.Parser", "csharp"))  # `using static Acme.Core.Parser;`
    alias = outline("csharp", imp("R = Acme.Core.Text.Rope", "csharp"))
    assert list(resolved("Acme.App/Program.cs", out, CS)) == ["Acme.Core/Parser.cs"]
    assert list(resolved("Acme.App/Program.cs", alias, CS)) == ["Acme.Core/Text/Rope.cs"]


def test_csharp_aliases_of_generic_and_nested_types_resolve_the_outer_type_file() -> None:
    generic = outline("csharp", imp("Ropes = Acme.Core.Text.Rope<System.String>", "csharp"))
    nested = outline("csharp", imp("Node = Acme.Core.Text.Rope.Node", "csharp"))
    unknown = outline("csharp", imp("X = Acme.Core.Text.Missing.Node", "csharp"))
    assert list(resolved("Acme.App/Program.cs", generic, CS)) == ["Acme.Core/Text/Rope.cs"]
    assert list(resolved("Acme.App/Program.cs", nested, CS)) == ["Acme.Core/Text/Rope.cs"]
    assert resolved("Acme.App/Program.cs", unknown, CS) == {}


def test_csharp_using_of_non_test_files_never_reaches_test_files_of_the_namespace() -> None:
    packages = {
        **CS_PACKAGES,
        "tests/Acme.Core.Tests/ParserTests.cs": "Acme.Core",
        "tests/Acme.Core.Tests/Builders.cs": "Acme.Core",
    }
    files = RepoFiles.build(packages, packages=packages)
    using = outline("csharp", imp("Acme.Core", "csharp"))
    helper = outline("csharp", imp("B = Acme.Core.Builders", "csharp"))
    assert list(resolved("Acme.App/Program.cs", using, files)) == [
        "Acme.Core/Lexer.cs",
        "Acme.Core/Parser.cs",
    ]
    assert resolved("Acme.App/Program.cs", helper, files) == {}
    tests = "tests/Acme.App.Tests/ProgramTests.cs"
    assert list(resolved(tests, using, files)) == [
        "Acme.Core/Lexer.cs",
        "Acme.Core/Parser.cs",
        "tests/Acme.Core.Tests/Builders.cs",
        "tests/Acme.Core.Tests/ParserTests.cs",
    ]
    assert list(resolved(tests, helper, files)) == ["tests/Acme.Core.Tests/Builders.cs"]


# --- packages imported by their published name ---------------------------------------------


PACKAGES = RepoFiles.build(
    [
        "packages/zod/package.json",
        "packages/zod/src/index.ts",
        "packages/zod/src/v4/index.ts",
        "packages/zod/tests/parse.test.ts",
        "packages/ui/package.json",
        "packages/ui/lib/button.js",
        "tests/fixtures/zod/package.json",  # a deeper copy of the name: the shallower one wins
        "Cargo.toml",
        "src/lib.rs",
        "src/client.rs",
        "tests/client.rs",
    ],
    packages={
        "packages/zod/package.json": "zod",
        "packages/ui/package.json": "@acme/ui",
        "tests/fixtures/zod/package.json": "zod",
        "Cargo.toml": "mini_redis",
    },
)


def test_a_js_package_of_the_repository_resolves_by_its_name() -> None:
    out = outline(
        "typescript",
        imp("zod", "js"),
        imp("zod/v4", "js"),
        imp("@acme/ui/button", "js"),
        imp("react", "js"),  # not the repository's
        imp("zod/../ui/lib/button", "js"),  # a subpath does not leave its package
    )
    assert resolved("packages/zod/tests/parse.test.ts", out, PACKAGES) == {
        "packages/zod/src/index.ts": "js zod (package packages/zod)",
        "packages/zod/src/v4/index.ts": "js zod/v4 (package packages/zod)",
        "packages/ui/lib/button.js": "js @acme/ui/button (package packages/ui)",
    }


def test_a_rust_crate_used_by_its_name_resolves_to_its_modules() -> None:
    out = outline(
        "rust", imp("mini_redis", "rust_use", "client", "Result"), imp("tokio", "rust_use")
    )
    assert resolved("tests/client.rs", out, PACKAGES) == {
        "src/client.rs": "rust use mini_redis",
        "src/lib.rs": "rust use mini_redis",
    }
