import pytest

from repocontext.errors import InvalidKeyError
from repocontext.store import keys


def test_every_family_round_trips_through_parse_key():
    assert keys.parse_key(keys.repo_key("r1")).family == "repo"
    parsed = keys.parse_key(keys.file_key("r1", "src/app.py"))
    assert (parsed.family, parsed.repo_id, parsed.path) == ("file", "r1", "src/app.py")
    assert keys.parse_key(keys.pkg_key("r1", "src")).path == "src"
    assert keys.parse_key(keys.content_key("r1", "a/b.c")).path == "a/b.c"
    sym = keys.parse_key(keys.symbol_key("r1", "pkg/mod.Class.method"))
    assert sym.name == "pkg/mod.Class.method"
    assert keys.parse_key(keys.xref_key("r1", "a%b")).name == "a%b"
    assert keys.parse_key(keys.session_key("r1", "s/1")).name == "s/1"
    mem = keys.parse_key(keys.mem_key("r/1", "to/do", "100%"))
    assert (mem.repo_id, mem.topic, mem.id) == ("r/1", "to/do", "100%")
    assert keys.parse_key(keys.vec_key("r1", "minilm", "chunk/7")).parts == ("minilm", "chunk/7")


def test_opaque_components_encode_percent_and_slash_but_paths_keep_slashes():
    assert keys.mem_key("r1", "a/b", "x%2F") == "repo/r1/mem/a%2Fb/x%252F"
    assert keys.file_key("r1", "src/deep/x.py") == "repo/r1/file/src/deep/x.py"
    assert keys.decode_component(keys.encode_component("%2F/%")) == "%2F/%"


def test_a_directory_prefix_covers_exactly_its_files():
    prefix = keys.family_prefix("r1", "file", "src/")
    assert keys.file_key("r1", "src/a.py").startswith(prefix)
    assert not keys.file_key("r1", "srcx/a.py").startswith(prefix)
    assert keys.family_prefix("r1", "mem", "to/do") == "repo/r1/mem/to%2Fdo/"
    assert not keys.file_key("r10", "a").startswith(keys.repo_prefix("r1"))


@pytest.mark.parametrize(
    "bad",
    ["", "/abs", "repo//x", "repo/r1/", "a\x00b", "x" * 481, "repo/r1/file/a\nb"],
)
def test_invalid_keys_are_refused_with_a_stable_code(bad):
    with pytest.raises(InvalidKeyError) as info:
        keys.validate_key(bad)
    assert info.value.code == "store.invalid_key"
    assert info.value.hint


@pytest.mark.parametrize("path", ["../etc/passwd", "a/../b", "/etc/x", "a//b", "a\\b", "./a"])
def test_paths_that_could_escape_or_alias_are_refused(path):
    with pytest.raises(InvalidKeyError):
        keys.file_key("r1", path)


@pytest.mark.parametrize(
    "bad",
    ["repo", "other/r1", "repo/r1/nope/x", "repo/r1/mem/only-topic", "repo/r1/symbol/a/b"],
)
def test_keys_outside_the_grammar_do_not_parse(bad):
    with pytest.raises(InvalidKeyError):
        keys.parse_key(bad)
