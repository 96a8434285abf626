"""Import resolution by path, and dependents, over small in-memory repositories."""

from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.links.resolve import dependents, resolve_imports
from repocontext.index.model import Link
from tests.index.outline_builders import imp, outline, resolved

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


# --- dependents ----------------------------------------------------------------------------------


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
