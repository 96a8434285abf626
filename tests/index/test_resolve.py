"""Import, reference, covering-test and dependent resolution over small in-memory repositories."""

import pytest

from repocontext.index.links.coverage import covering_tests
from repocontext.index.links.references import (
    MAX_DEFINING_FILES,
    build_symbol_index,
    reference_links,
)
from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.links.resolve import dependents, link_repository, resolve_imports
from repocontext.index.model import FileOutline, ImportRef, Link, Symbol
from repocontext.index.parsing.manifests import manifest_name
from repocontext.index.parsing.parser import parse_outline


def imp(spec: str, kind: str, *names: str, level: int = 0, system: bool = False) -> ImportRef:
    return ImportRef(spec=spec, kind=kind, line=1, level=level, names=names, system=system)


def outline(language: str, *imports: ImportRef, refs: tuple[str, ...] = ()) -> FileOutline:
    return FileOutline(language=language, imports=imports, references=refs)


def fn(name: str, *children: Symbol, kind: str = "function") -> Symbol:
    return Symbol(kind, name, name, f"def {name}()", 1, 2, children)


def resolved(path: str, out: FileOutline, files: RepoFiles) -> dict[str, str]:
    return {link.target: link.reason for link in resolve_imports(path, out, files)}


# --- Python -------------------------------------------------------------------------------------

PY = RepoFiles.build(
    [
        "app.py",
        "util.py",
        "pkg/__init__.py",
        "pkg/util.py",
        "pkg/util.pyi",
        "pkg/sub/__init__.py",
        "pkg/sub/mod.py",
        "pkg/sub/sibling.py",
        "tests/helpers.py",
        "tests/test_app.py",
        "stubs/api.pyi",
    ]
)


def test_python_absolute_import_resolves_modules_and_package_inits() -> None:
    out = outline("python", imp("pkg.util", "python"), imp("pkg.sub", "python"))
    assert resolved("app.py", out, PY) == {
        "pkg/util.py": "python import pkg.util",
        "pkg/sub/__init__.py": "python import pkg.sub",
    }


def test_python_from_import_links_submodules_and_the_package_for_other_names() -> None:
    links = resolve_imports(
        "app.py", outline("python", imp("pkg", "python", "util", "VERSION")), PY
    )
    assert links == [
        Link("app.py", "pkg/__init__.py", "import", "python import pkg", ("VERSION",)),
        Link("app.py", "pkg/util.py", "import", "python import pkg.util"),
    ]


def test_python_src_layout_resolves_through_the_src_prefix() -> None:
    files = RepoFiles.build(["src/mylib/__init__.py", "src/mylib/core.py", "tests/test_core.py"])
    out = outline("python", imp("mylib.core", "python", "parse"))
    assert resolved("tests/test_core.py", out, files) == {
        "src/mylib/core.py": "python import mylib.core"
    }


def test_python_root_module_wins_over_the_src_layout() -> None:
    files = RepoFiles.build(["src/mylib/core.py", "mylib/core.py", "main.py"])
    assert list(resolved("main.py", outline("python", imp("mylib.core", "python")), files)) == [
        "mylib/core.py"
    ]


def test_python_absolute_import_falls_back_to_the_importing_files_directory() -> None:
    out = outline("python", imp("helpers", "python"))
    assert list(resolved("tests/test_app.py", out, PY)) == ["tests/helpers.py"]


def test_python_absolute_import_inside_a_package_never_resolves_to_a_sibling() -> None:
    # Python 3 has no implicit relative imports: `import json` in pkg/ is the stdlib module,
    # while a script directory such as tests/ (no __init__.py) is on sys.path.
    files = RepoFiles.build(["pkg/__init__.py", "pkg/json.py", "pkg/app.py", "tools/json.py"])
    assert resolved("pkg/app.py", outline("python", imp("json", "python")), files) == {}
    assert list(resolved("tools/run.py", outline("python", imp("json", "python")), files)) == [
        "tools/json.py"
    ]


def test_python_relative_imports_climb_one_package_per_extra_dot() -> None:
    out = outline(
        "python",
        imp("", "python", "sibling", level=1),
        imp("util", "python", "helper", level=2),
    )
    links = resolve_imports("pkg/sub/mod.py", out, PY)
    assert [(link.target, link.reason, link.names) for link in links] == [
        ("pkg/sub/sibling.py", "python import .sibling", ()),
        ("pkg/util.py", "python import ..util", ("helper",)),
    ]


def test_python_relative_import_beyond_the_repository_top_makes_no_link() -> None:
    # Three dots from pkg/sub/mod.py is the root (util.py); four would leave the repository.
    assert list(resolved("pkg/sub/mod.py", outline("python", imp("util", "python", level=3)), PY))
    assert resolved("pkg/sub/mod.py", outline("python", imp("util", "python", level=4)), PY) == {}


def test_python_external_and_unknown_modules_make_no_link() -> None:
    out = outline("python", imp("os.path", "python"), imp("requests", "python", "get"))
    assert resolve_imports("app.py", out, PY) == []


def test_python_stub_only_module_resolves_to_the_pyi_file() -> None:
    assert list(resolved("app.py", outline("python", imp("stubs.api", "python")), PY)) == [
        "stubs/api.pyi"
    ]


def test_python_package_init_is_preferred_over_a_same_named_module() -> None:
    files = RepoFiles.build(["a/b.py", "a/b/__init__.py", "main.py"])
    assert list(resolved("main.py", outline("python", imp("a.b", "python")), files)) == [
        "a/b/__init__.py"
    ]


def test_two_imports_of_one_file_make_one_link_keeping_the_first_reason() -> None:
    out = outline("python", imp("pkg.util", "python"), imp("pkg.util", "python", "parse"))
    assert resolve_imports("app.py", out, PY) == [
        Link("app.py", "pkg/util.py", "import", "python import pkg.util", ("parse",))
    ]


def test_self_imports_and_unknown_import_kinds_make_no_link() -> None:
    out = outline("python", imp("pkg.util", "python"), imp("pkg.util", "cobol"))
    assert resolve_imports("pkg/util.py", out, PY) == []


# --- JavaScript / TypeScript --------------------------------------------------------------------

JS = RepoFiles.build(
    [
        "src/app.ts",
        "src/main.js",
        "src/util.ts",
        "src/util.js",
        "src/only.ts",
        "src/types.d.ts",
        "src/components/index.tsx",
        "src/components/index.js",
        "lib/x.mjs",
    ]
)


def test_typescript_extensionless_import_tries_ts_before_js() -> None:
    out = outline("typescript", imp("./util", "js", "debounce", "*"))
    assert resolve_imports("src/app.ts", out, JS) == [
        Link("src/app.ts", "src/util.ts", "import", "js ./util -> util.ts", ("debounce",))
    ]


def test_javascript_extensionless_import_tries_js_before_ts() -> None:
    out = outline("javascript", imp("./util", "js"))
    assert resolved("src/main.js", out, JS) == {"src/util.js": "js ./util -> util.js"}


def test_directory_import_resolves_to_its_index_file() -> None:
    ts = resolved("src/app.ts", outline("typescript", imp("./components", "js")), JS)
    js = resolved("src/main.js", outline("javascript", imp("./components", "js")), JS)
    assert ts == {"src/components/index.tsx": "js ./components -> index.tsx"}
    assert js == {"src/components/index.js": "js ./components -> index.js"}


def test_specifier_with_an_existing_extension_resolves_exactly() -> None:
    out = outline("typescript", imp("../lib/x.mjs", "js"))
    assert resolved("src/app.ts", out, JS) == {"lib/x.mjs": "js ../lib/x.mjs"}


def test_typescript_esm_js_specifier_resolves_to_the_ts_source() -> None:
    out = outline("typescript", imp("./only.js", "js"))
    assert resolved("src/app.ts", out, JS) == {"src/only.ts": "js ./only.js -> only.ts"}


def test_declaration_file_resolves_when_no_source_exists() -> None:
    assert list(resolved("src/app.ts", outline("typescript", imp("./types", "js")), JS)) == [
        "src/types.d.ts"
    ]


def test_bare_and_escaping_specifiers_make_no_link() -> None:
    out = outline(
        "typescript",
        imp("react", "js"),
        imp("@scope/util", "js"),
        imp("../../../util", "js"),
        imp("./missing", "js"),
    )
    assert resolve_imports("src/app.ts", out, JS) == []


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


# --- Rust ---------------------------------------------------------------------------------------

RUST = RepoFiles.build(
    [
        "src/lib.rs",
        "src/foo.rs",
        "src/foo/inner.rs",
        "src/inner.rs",
        "src/bar/mod.rs",
        "src/a.rs",
        "src/a/b.rs",
        "src/a/c.rs",
        "src/net/mod.rs",
        "crates/tool/src/main.rs",
        "crates/tool/src/cli.rs",
        "tests/integration.rs",
        "tests/common/mod.rs",
        "tests/integration/x.rs",
    ]
)


def test_rust_mod_in_lib_rs_resolves_to_a_sibling_file_or_its_mod_rs() -> None:
    out = outline("rust", imp("foo", "rust_mod"), imp("bar", "rust_mod"), imp("gone", "rust_mod"))
    assert resolved("src/lib.rs", out, RUST) == {
        "src/foo.rs": "rust mod foo",
        "src/bar/mod.rs": "rust mod bar",
    }


def test_rust_mod_in_a_plain_module_file_resolves_in_the_directory_named_after_it() -> None:
    out = outline("rust", imp("inner", "rust_mod"))
    assert list(resolved("src/foo.rs", out, RUST)) == ["src/foo/inner.rs"]


def test_rust_mod_with_a_path_attribute_resolves_beside_the_declaring_file() -> None:
    files = RepoFiles.build(["src/lib.rs", "src/sys/unix.rs", "src/net/mod.rs"])
    out = outline(
        "rust",
        imp("sys/unix.rs", "rust_mod_path"),
        imp("../outside.rs", "rust_mod_path"),
        imp("sys/missing.rs", "rust_mod_path"),
    )
    assert resolved("src/lib.rs", out, files) == {"src/sys/unix.rs": "rust mod path sys/unix.rs"}
    parent = outline("rust", imp("../sys/unix.rs", "rust_mod_path"))
    assert list(resolved("src/net/mod.rs", parent, files)) == ["src/sys/unix.rs"]


def test_rust_use_crate_path_resolves_the_longest_module_prefix() -> None:
    out = outline(
        "rust",
        imp("crate::a::b::Thing", "rust_use"),
        imp("crate::a::Other", "rust_use"),
        imp("std::collections::HashMap", "rust_use"),
    )
    assert resolved("src/foo.rs", out, RUST) == {
        "src/a/b.rs": "rust use crate::a::b::Thing",
        "src/a.rs": "rust use crate::a::Other",
    }


def test_rust_use_super_and_groups_resolve_from_the_current_module() -> None:
    sup = resolved("src/a/b.rs", outline("rust", imp("super::c::Helper", "rust_use")), RUST)
    # `use crate::{a::b, net};` and `use crate::a::*;` as the parser reports them.
    group = resolved("src/lib.rs", outline("rust", imp("crate", "rust_use", "a::b", "net")), RUST)
    glob = resolved("src/lib.rs", outline("rust", imp("crate::a", "rust_use", "*")), RUST)
    assert list(sup) == ["src/a/c.rs"]
    assert sorted(group) == ["src/a/b.rs", "src/net/mod.rs"]
    assert list(glob) == ["src/a.rs"]


def test_rust_use_above_the_crate_root_or_of_a_glob_alone_makes_no_link() -> None:
    out = outline("rust", imp("super::super::a", "rust_use"), imp("super", "rust_use", "*"))
    assert resolved("src/lib.rs", out, RUST) == {}
    assert resolved("src/a/b.rs", outline("rust", imp("self::c", "rust_use")), RUST) == {}


def test_rust_use_of_an_item_of_the_anchor_module_itself_links_its_file() -> None:
    crate = resolved("src/foo.rs", outline("rust", imp("crate::Buf", "rust_use")), RUST)
    sup = resolved("src/a/b.rs", outline("rust", imp("super::Value", "rust_use")), RUST)
    # a bare first segment is another crate: no fallback to this crate's files
    bare = resolved("src/foo.rs", outline("rust", imp("serde::Serialize", "rust_use")), RUST)
    assert (crate, sup, bare) == (
        {"src/lib.rs": "rust use crate::Buf"},
        {"src/a.rs": "rust use super::Value"},
        {},
    )


def test_rust_mod_of_an_integration_test_crate_is_beside_it() -> None:
    out = outline("rust", imp("common", "rust_mod"), imp("integration::x", "rust_use"))
    # `use integration::x` in a test crate names the crate under test, not tests/*.rs
    assert list(resolved("tests/integration.rs", out, RUST)) == ["tests/common/mod.rs"]


def test_rust_crate_root_is_the_nearest_src_directory() -> None:
    out = outline("rust", imp("crate::cli::run", "rust_use"), imp("super::x", "rust_use"))
    assert list(resolved("crates/tool/src/main.rs", out, RUST)) == ["crates/tool/src/cli.rs"]


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


CS_PACKAGES = {
    "Acme.Core/Parser.cs": "Acme.Core",
    "Acme.Core/Lexer.cs": "Acme.Core",
    "Acme.Core/Text/Rope.cs": "Acme.Core.Text",
    "Acme.App/Program.cs": "Acme.App",
}
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


@pytest.mark.parametrize(
    ("path", "text", "name"),
    [
        ("web/package.json", '{"name": "@acme/ui", "main": "dist/index.js"}', "@acme/ui"),
        ("package.json", '{"private": true}', None),
        ("package.json", "{not json", None),
        ("package.json", '["a list"]', None),
        ("crates/mini/Cargo.toml", '[package]\nname = "mini-redis"\n', "mini_redis"),
        ("Cargo.toml", '[package]\nname = "tokio-util"\n[lib]\nname = "tu"\n', "tu"),
        ("Cargo.toml", '[workspace]\nmembers = ["a"]\n', None),
        ("Cargo.toml", "[package\n", None),
        ("README.md", "name", None),
        ("package.json", '\ufeff{"name": "bom"}', "bom"),
        ("node_modules/react/package.json", '{"name": "react"}', None),  # an installed copy
        ("package.json", '{"a":' * 5000, None),  # nested too deep to parse
        ("Cargo.toml", "a = " + "[" * 5000, None),
        ("Cargo.toml", "[package]\nname = 5\n", None),
        ("Cargo.toml", "[package]\nname = { workspace = true }\n", None),
        ("package.json", '{"name": ["a"]}', None),
    ],
)
def test_manifests_name_their_package(path, text, name) -> None:
    assert manifest_name(path, text) == name


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


# --- C / C++ and Ruby ---------------------------------------------------------------------------

C = RepoFiles.build(
    ["src/main.c", "src/util.h", "include/config.h", "a/dup.h", "b/dup.h", "third/stdio.h"]
)


def test_c_quoted_include_resolves_next_to_the_file_then_by_unique_basename() -> None:
    out = outline(
        "c",
        imp("util.h", "c_include"),
        imp("config.h", "c_include"),
        imp("dup.h", "c_include"),
        imp("stdio.h", "c_include", system=True),
    )
    assert resolved("src/main.c", out, C) == {
        "src/util.h": 'c include "util.h"',
        "include/config.h": 'c include "config.h"',
    }


def test_c_include_with_directories_matches_a_path_suffix() -> None:
    out = outline("cpp", imp("../b/dup.h", "c_include"), imp("a/dup.h", "c_include"))
    assert sorted(resolved("src/main.c", out, C)) == ["a/dup.h", "b/dup.h"]


def test_an_angle_include_with_directories_links_the_one_file_ending_so() -> None:
    files = RepoFiles.build(
        [
            "src/main.cpp",
            "include/mylib/core.hpp",
            "src/core.cpp",  # its source
            "include/mylib/util.hpp",
            "single_include/mylib/util.hpp",  # two copies: ambiguous
            "vector",
            "stdio.h",
        ]
    )
    out = outline(
        "cpp",
        imp("mylib/core.hpp", "c_include", system=True),
        imp("mylib/util.hpp", "c_include", system=True),
        imp("vector", "c_include", system=True),  # bare: the system's, never the repository's
        imp("stdio.h", "c_include", system=True),
        imp("../mylib/core.hpp", "c_include", system=True),
    )
    assert resolved("src/main.cpp", out, files) == {
        "include/mylib/core.hpp": "c include <mylib/core.hpp>",
        "src/core.cpp": "c include <mylib/core.hpp> (its source core.cpp)",
    }


def test_a_c_include_also_links_the_headers_source_file() -> None:
    files = RepoFiles.build(
        [
            "test.c",
            "net.h",
            "net.c",  # beside its header
            "include/sds.h",
            "src/sds.c",  # the only sds source anywhere
            "include/dict.h",
            "a/dict.c",
            "b/dict.cpp",  # two: ambiguous, no source link
            "alloc.h",  # a header without a source
        ]
    )
    out = outline(
        "c",
        imp("net.h", "c_include"),
        imp("include/sds.h", "c_include"),
        imp("include/dict.h", "c_include"),
        imp("alloc.h", "c_include"),
    )
    assert resolved("test.c", out, files) == {
        "net.h": 'c include "net.h"',
        "net.c": 'c include "net.h" (its source net.c)',
        "include/sds.h": 'c include "include/sds.h"',
        "src/sds.c": 'c include "include/sds.h" (its source sds.c)',
        "include/dict.h": 'c include "include/dict.h"',
        "alloc.h": 'c include "alloc.h"',
    }
    own = outline("c", imp("net.h", "c_include"))
    assert list(resolved("net.c", own, files)) == ["net.h"]  # a file never imports itself


RUBY = RepoFiles.build(
    [
        "lib/app/user.rb",
        "lib/app.rb",
        "spec/user_spec.rb",
        "spec/support/db.rb",
        "spec/spec_helper.rb",
        "tasks.rb",
        "gems/extra/test/widget_test.rb",
        "gems/extra/test/test_helper.rb",
    ]
)


def test_ruby_require_relative_resolves_against_the_requiring_file() -> None:
    out = outline(
        "ruby",
        imp("support/db", "ruby_require_relative"),
        imp("../lib/app/user.rb", "ruby_require_relative"),
        imp("../../escape", "ruby_require_relative"),
    )
    assert resolved("spec/user_spec.rb", out, RUBY) == {
        "spec/support/db.rb": "ruby require_relative support/db",
        "lib/app/user.rb": "ruby require_relative ../lib/app/user.rb",
    }


def test_ruby_require_looks_in_lib_then_the_root() -> None:
    out = outline(
        "ruby",
        imp("app/user", "ruby_require"),
        imp("tasks", "ruby_require"),
        imp("json", "ruby_require"),
    )
    assert sorted(resolved("spec/user_spec.rb", out, RUBY)) == ["lib/app/user.rb", "tasks.rb"]


def test_ruby_require_finds_helpers_on_the_spec_and_test_load_paths() -> None:
    spec = resolved("spec/user_spec.rb", outline("ruby", imp("spec_helper", "ruby_require")), RUBY)
    test = outline("ruby", imp("test_helper", "ruby_require"))
    assert list(spec) == ["spec/spec_helper.rb"]
    assert list(resolved("gems/extra/test/widget_test.rb", test, RUBY)) == [
        "gems/extra/test/test_helper.rb"
    ]


# --- references ---------------------------------------------------------------------------------


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


# --- covering tests and dependents --------------------------------------------------------------


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


def test_dependents_group_links_by_target_in_a_stable_order() -> None:
    links = [
        Link("z.py", "lib.py", "import", "python import lib"),
        Link("a.py", "lib.py", "reference", "references symbol run_all"),
        Link("a.py", "lib.py", "import", "python import lib"),
        Link("a.py", "z.py", "import", "python import z"),
    ]
    assert dependents(links) == {
        "lib.py": [links[2], links[1], links[0]],
        "z.py": [links[3]],
    }
