"""Language detection by extension, name and content; test and config file recognition."""

import pytest

from repocontext.index.files.extract import extract_file
from repocontext.index.files.walk import WalkEntry
from repocontext.index.parsing.languages import (
    content_language,
    is_config_path,
    is_documentation_path,
    is_test_path,
    language_for,
)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("stubs/x.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/app.mjs", "javascript"),
        ("web/app.cjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/app.ts", "typescript"),
        ("web/app.mts", "typescript"),
        ("web/app.cts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("src/ring.c", "c"),
        ("include/ring.h", "c"),
        ("src/shape.cc", "cpp"),
        ("src/shape.cpp", "cpp"),
        ("src/shape.cxx", "cpp"),
        ("include/shape.hpp", "cpp"),
        ("include/shape.hh", "cpp"),
        ("include/shape.hxx", "cpp"),
        ("include/shape.h++", "cpp"),
        ("src/Program.cs", "csharp"),
        ("lib/shop.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("Gemfile", "ruby"),
        ("app/SRC/MAIN.PY", "python"),
    ],
)
def test_language_is_chosen_by_extension_or_well_known_name(path, language):
    assert language_for(path) == language


@pytest.mark.parametrize("path", ["README.md", "Makefile", "data.json", ".py", "noext", ""])
def test_files_without_a_grammar_have_no_language(path):
    assert language_for(path) is None


@pytest.mark.parametrize(
    "path",
    [
        "tests/helpers.py",
        "pkg/test/fixtures.go",
        "spec/models/user_spec.rb",
        "src/__tests__/App.tsx",
        "test_parser.py",
        "pkg/parser_test.py",
        "conftest.py",
        "store/store_test.go",
        "web/app.test.ts",
        "web/app.test.js",
        "web/App.test.tsx",
        "web/app.spec.ts",
        "web/app.spec.js",
        "src/OrderServiceTest.java",
        "src/OrderServiceTests.java",
        "Billing/InvoiceTests.cs",
        "Billing/InvoiceTest.cs",
        "lib/cart_spec.rb",
        "lib/cart_test.rb",
    ],
)
def test_test_files_are_recognised_by_directory_or_name(path):
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/parser.py",
        "src/testing.py",
        "src/contest.py",
        "src/latest.go",
        "web/attest.ts",
        "src/Testimonial.java",
        "lib/specification.rb",
        "",
    ],
)
def test_source_files_are_not_tests(path):
    assert not is_test_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml",
        "setup.cfg",
        "package.json",
        "web/tsconfig.json",
        "web/tsconfig.build.json",
        "go.mod",
        "Cargo.toml",
        "pom.xml",
        "build.gradle",
        "src/App/App.csproj",
        "Gemfile",
        "Makefile",
        ".github/workflows/ci.yml",
        "deploy/values.yaml",
        "tox.ini",
        "config/app.cfg",
        "rustfmt.toml",
    ],
)
def test_config_files_are_recognised(path):
    assert is_config_path(path)


@pytest.mark.parametrize("path", ["src/config.py", "data/users.json", "README.md", "main.go"])
def test_source_and_data_files_are_not_config(path):
    assert not is_config_path(path)


CPP_HEADER = b"""#pragma once
#include <string>

namespace fmt {
template <typename T> class basic_view {
 public:
  explicit basic_view(const T* data) : data_(data) {}
  const T* data() const { return data_; }

 private:
  const T* data_;
};
}  // namespace fmt
"""
C_HEADER = b"""#ifndef SDS_H
#define SDS_H
#ifdef __cplusplus
extern "C" {
#endif
typedef char *sds;
sds sdsnew(const char *init);
#ifdef __cplusplus
}
#endif
#endif
"""


def test_a_dot_h_header_that_reads_as_cpp_is_parsed_as_cpp(tmp_path):
    assert content_language("include/fmt/base.h", CPP_HEADER) == "cpp"
    assert content_language("src/sds.h", C_HEADER) == "c"  # extern "C" alone is C
    assert content_language("src/sds.c", CPP_HEADER) == "c"  # only headers are sniffed
    commented = b"/* like std::from_chars */\n// std::string\n * see std::vector\nint f(void);\n"
    assert content_language("ffc.h", commented) == "c"  # `std::` in comments only
    (tmp_path / "base.h").write_bytes(CPP_HEADER)
    entry = WalkEntry("base.h", len(CPP_HEADER), 0, 0)
    extracted = extract_file(str(tmp_path), entry)
    assert extracted.language == "cpp" and extracted.outline is not None
    (namespace,) = extracted.outline.symbols
    assert [s.fq_name for s in namespace.children] == ["base.fmt.basic_view"]
    assert [s.name for s in namespace.children[0].children] == ["basic_view", "data"]


def test_test_file_names_of_c_ruby_and_csharp_conventions():
    for path in ("test.c", "tests/test_sds.c", "test/format-test.cc", "base_unittest.cxx"):
        assert is_test_path(path), path
    for path in ("test/test_widget.rb", "test/Polly.Specs/PolicySpecs.cs", "x.test.mts"):
        assert is_test_path(path), path
    assert language_for("examples/stream.ru") == "ruby"
    assert not is_test_path("src/contest.c") and not is_test_path("lib/testing.rb")
    assert not is_test_path("lib/sinatra/test_helpers.rb")  # library code, outside test/


@pytest.mark.parametrize(
    "path",
    [
        "docs/conf.py",
        "Doc/tools/extensions/pyspecific.py",
        "examples/tutorial/flaskr/db.py",
        "Examples/app.js",
        "demo/server.go",
        "demos/app.ts",
        "samples/basic/main.rs",
        "man/make_pages.py",
        "lib/documentation/render.rb",
        "src/javadoc/Gen.java",
    ],
)
def test_documentation_and_example_code_is_classified_by_its_directory(path):
    assert is_documentation_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/flask/app.py",
        "docs.py",
        "src/docs/render.py",  # Linguist: docs/ only at the top
        "pkg/examples/gen.go",  # ... and examples/ too
        "src/example/app.py",
        "documentation.py",
        "",
    ],
)
def test_source_files_are_not_documentation(path):
    assert not is_documentation_path(path)
