"""Referenced names by lexing, checked against the grammars' own identifier nodes."""

import importlib
from pathlib import Path

import pytest
from tree_sitter import Language, Parser, Query, QueryCursor

from repocontext.index.parsing._lexer import identifier_uses, identifiers
from repocontext.index.parsing.languages import LANGUAGES
from repocontext.index.parsing.parser import _GRAMMARS, _without_class_macros

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "languages"

# The node types each grammar uses for names (what a query capturing every identifier sees).
_NAME_NODES = {
    "python": ["identifier"],
    "javascript": ["identifier", "property_identifier", "shorthand_property_identifier"],
    "typescript": ["identifier", "property_identifier", "type_identifier"],
    "tsx": ["identifier", "property_identifier", "type_identifier"],
    "go": ["identifier", "type_identifier", "field_identifier", "package_identifier"],
    "rust": ["identifier", "type_identifier", "field_identifier"],
    "java": ["identifier", "type_identifier"],
    "c": ["identifier", "type_identifier", "field_identifier"],
    "cpp": ["identifier", "type_identifier", "field_identifier", "namespace_identifier"],
    "csharp": ["identifier"],
    "ruby": ["identifier", "constant"],
}


def grammar_names(language: str, source: bytes) -> set[str]:
    module, function = _GRAMMARS[language]
    grammar = Language(getattr(importlib.import_module(module), function)())
    if language == "cpp":  # parsed as the indexer parses it (export macros of class heads)
        source = _without_class_macros(source)
    tree = Parser(grammar).parse(source)
    query = Query(grammar, "\n".join(f"({node}) @name" for node in _NAME_NODES[language]))
    found = QueryCursor(query).captures(tree.root_node).get("name", [])
    return {(node.text or b"").decode() for node in found if not _in_attribute(node)}


_SKIPPED = (
    "attribute_item",  # Rust `#[derive(Debug)]`
    "inner_attribute_item",
    "import_declaration",  # Java `import a.b.C;` and `package a.b;`
    "package_declaration",
    "using_directive",  # C# `using A.B;`
)


def _in_attribute(node):
    """Inside a construct lexing skips on purpose (attributes, imports, packages)."""
    while node is not None:
        if node.type in _SKIPPED:
            return True
        node = node.parent
    return False


@pytest.mark.parametrize("language", LANGUAGES)
def test_lexing_finds_every_name_node_of_each_fixture_sample(language):
    sample = next(p for p in (FIXTURES / language).iterdir() if p.name.startswith("sample"))
    source = sample.read_bytes()
    expected = grammar_names(language, source)
    assert expected, "the oracle found no names"
    assert expected - identifiers(source, language) == set()


def test_comments_strings_numbers_and_keywords_are_not_names():
    source = b'''
import os  # comment_word
x = f"{{escaped}}" + r'raw_word' + b"bytes_word" + """doc_word
more_doc""" + 0xFF + 1e10 + 10_000
def used(arg): return arg is None
'''
    assert identifiers(source, "python") == {"os", "x", "used", "arg"}


@pytest.mark.parametrize(
    ("language", "source", "names"),
    [
        (
            "javascript",
            b"const $el = `tpl word`; /* block */ // line\nlet a = 'q';",
            {"$el", "a"},
        ),
        ("go", b"s := `raw word`\nc := 'x'\nreturn s // done", {"s", "c"}),
        ("rust", b"fn f<'a>(v: &'a str) -> char { 'z' } // note", {"f", "a", "v", "str", "char"}),
        (
            "rust",
            b'#![allow(dead_code)]\n#[derive(Debug)]\n#[cfg(any(unix, feature = "x"))]\n'
            b"#[instrument(skip(self))]\nfn run(x: Ctx) -> Ctx { x }",
            {"run", "x", "Ctx"},
        ),
        (
            "c",
            b'#include <stdio.h>\n#include "local.h"\nint main(void) { return puts("hi"); }',
            {"main", "puts"},
        ),
        ("cpp", b'auto s = R"x(not_a_name)x"; int n = 0x1F;', {"s", "n"}),
        ("csharp", b'var p = @"C:\\\\dir ""quoted"""; var q = $"{{escaped}}";', {"p", "q"}),
        ("java", b'String t = """\n  text_block\n  """; int k = 10L;', {"String", "t", "k"}),
        (
            "ruby",
            b"=begin\ndoc_word\n=end\ndef empty?(list) = list.empty? # c\n",
            {"empty?", "list"},
        ),
    ],
)
def test_each_family_skips_its_comments_and_literals(language, source, names):
    assert identifiers(source, language) == names


@pytest.mark.parametrize(
    ("language", "source", "names"),
    [
        (
            "python",
            b'x = rb"a" + Br\'b\' + u"c" + rbx"d" + (b) + b"e" + xb"f" + _u"g"',
            {"x", "rbx", "b", "xb", "_u"},  # a prefix is 1-2 letters starting a word
        ),
        (
            "cpp",
            b'auto a = u8R"(in raw)"; auto b = RR"s" + LR"(raw)" + Lx"t" + u8"v" + U"w" + R;',
            {"a", "b", "RR", "Lx", "R"},
        ),
    ],
)
def test_string_prefixes_are_not_names(language, source, names):
    assert identifiers(source, language) == names


def test_ruby_heredocs_percent_literals_regexps_and_globals_are_not_names():
    source = b"""
usage = format(<<~TEXT.strip, banner)
  Usage: rollout ENV #{stage}
TEXT
words = %w(alpha beta) + %i[kept_symbol]
ok = line =~ /deploy (now|later)/i || match(/roll back/)
half = total / count / 2
$stdout.puts(half)
"""
    assert identifiers(source, "ruby") == {
        "usage", "format", "strip", "banner", "stage",  # the heredoc's line and hole only
        "words", "kept_symbol",  # %i symbols count like :name
        "ok", "line", "match",
        "half", "total", "count",  # divisions are no regular expressions
        "puts",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("language", "source", "names"),
    [
        (
            "python",
            b'x = f"a {first} {{no}} {obj.attr:{width}}" + rf\'{raw}\' + "{plain}"\n'
            b'y = f"""\n{multi}\n""" if x else elif_"{tail}"',
            {"x", "first", "obj", "attr", "width", "raw", "y", "multi", "elif_"},
        ),
        (
            "javascript",
            b"const s = a`${tagged}` + `x ${one + two} ${{}}`;",
            {"s", "a", "tagged", "one", "two"},
        ),
        (
            "ruby",
            b'puts "hi #{name} #{obj.call}" # #{commented}',
            {"puts", "name", "obj", "call", "commented"},
        ),
        ("csharp", b'var s = $"v {Value} {{esc}}" + $@"{Other}";', {"s", "Value", "Other"}),
    ],
)
def test_names_in_string_interpolations_are_found(language, source, names):
    # (an interpolation-looking comment counts too: a possible extra reference, by design)
    assert identifiers(source, language) == names


def test_invalid_utf8_and_non_ascii_names_survive():
    assert identifiers("café = ünïcode\n".encode() + b"\xff bad", "python") == {
        "café",
        "ünïcode",
        "\ufffd",
        "bad",
    }


def test_ruby_labels_are_not_names_but_symbols_and_scoped_constants_are():
    source = b"""
def initialize(name:, strict: DEFAULT_STRICT)
  print_table(rows, indent: 2, truncate: true)
  send(:render, { group: :runtime }, Thor::Shell::Basic, ::TopLevel)
  ok = ready? ? name : fallback!
end
"""
    assert identifiers(source, "ruby") == {
        "initialize", "name", "DEFAULT_STRICT",  # (a label's value is a use)
        "print_table", "rows",
        "send", "render", "runtime", "Thor", "Shell", "Basic", "TopLevel",
        "ok", "ready?", "fallback!",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("source", "names"),
    [
        # a shift is no heredoc, and a line that merely starts with the word ends nothing
        (b"MASK = 1<<BITS\nBITS.times { |i| puts i }\n", {"MASK", "BITS", "times", "i", "puts"}),
        # a heredoc in a comment leaves the code after it alone
        (b"# x = <<~EOS\n#   text\n# EOS\nafter_it(1)\n", {"after_it"}),
        # an unclosed %w( (invalid) ends the file's names, not the lexer's speed
        (b"first(1)\nwords = %w(a b\n", {"first", "words"}),
    ],
)
def test_ruby_literals_that_look_like_heredocs_or_word_lists(source, names):
    assert identifiers(source, "ruby") == names


@pytest.mark.parametrize(
    ("language", "source", "names", "members"),
    [
        (
            "python",
            b"response = self.client.get(url)\nrows = (query\n    .filter(x)\n    . all())\n"
            b'f"{obj.label}"\nn = 1.5\n',
            {
                "response",
                "self",
                "client",
                "get",
                "url",
                "rows",
                "query",
                "filter",
                "x",
                "all",
                "obj",
                "label",
                "n",
            },
            {"client", "get", "filter", "all", "label"},
        ),
        (
            "typescript",
            b"const v = a?.b.c(...rest);\nconst { target } = opts;\n",
            {"v", "a", "b", "c", "rest", "target", "opts"},
            {"b", "c", "rest"},  # (a spread reads as a member: only ever one link too many)
        ),
        (
            "rust",
            b"let f = Frame::parse(&mut buf)?;\nv.len()\n",
            {"f", "Frame", "parse", "buf", "v", "len"},
            {"parse", "len"},
        ),
        ("java", b"int n = list.size();\n", {"n", "list", "size"}, set()),  # (not needed)
    ],
)
def test_member_uses_follow_a_dot_or_a_rust_path(language, source, names, members):
    assert identifier_uses(source, language) == (names, members)


def test_a_rust_attribute_may_hold_brackets_in_its_strings():
    source = b'#[error("expected `[`")]\nOpenBracket,\n#[error("expected `]`")]\nMiddle(Wrapper)\n'
    assert identifiers(source, "rust") == {"OpenBracket", "Middle", "Wrapper"}
