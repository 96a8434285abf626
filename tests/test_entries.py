import pytest

from repocontext.entries import recall, scan
from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.store import MEMORY, STRUCTURAL, SYMBOL, DocPatch, Store
from repocontext.store.keys import file_key, mem_key, pkg_key, repo_key, symbol_key, xref_key
from repocontext.testing import FakeClock


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "d", clock=FakeClock()) as opened:
        opened.put(STRUCTURAL, repo_key("r"), {"root": "/x", "index": {"status": "completed"}})
        opened.put(STRUCTURAL, file_key("r", "src/a.py"), {"path": "src/a.py", "symbols": [{}, {}]})
        opened.put(STRUCTURAL, pkg_key("r", "src"), {"path": "src", "files": 1})
        opened.put(SYMBOL, symbol_key("r", "src.a.f"), {"defs": [{"path": "src/a.py"}]})
        opened.merge_fields(
            MEMORY,
            mem_key("r", "todo", "1"),
            DocPatch(set_fields={"title": "t"}, add={"tags": ["x"]}),
        )
        opened.put(STRUCTURAL, file_key("r", "tmp.py"), {"path": "tmp.py"}, ttl_seconds=5)
        yield opened


def test_recall_shapes_each_family(store):
    repo = recall(store, repo_key("r"))
    assert repo.kind == "repo" and repo.fields == {"root": "/x"}
    file_entry = recall(store, file_key("r", "src/a.py"))
    assert file_entry.path == "src/a.py" and file_entry.fields["symbolsCount"] == 2
    assert recall(store, pkg_key("r", "src")).kind == "package"
    assert recall(store, symbol_key("r", "src.a.f")).fully_qualified_name == "src.a.f"
    memory = recall(store, mem_key("r", "todo", "1"))
    assert (memory.topic, memory.id, memory.tags) == ("todo", "1", ("x",))
    assert memory.fields == {"title": "t"}
    assert recall(store, file_key("r", "tmp.py")).expires_at > 0
    missing = recall(store, file_key("r", "nope.py"))
    assert missing.exists is False and missing.fields == {}


def test_recall_refuses_families_it_cannot_show(store):
    with pytest.raises(InvalidInputError):
        recall(store, xref_key("r", "out:src/a.py"))


def test_scan_walks_every_scope(store):
    assert [e.path for e in scan(store, "r", "files").entries] == ["src/a.py", "tmp.py"]
    assert [e.path for e in scan(store, "r", "files", path_prefix="src/").entries] == ["src/a.py"]
    assert [e.kind for e in scan(store, "r", "packages").entries] == ["package"]
    assert [e.fully_qualified_name for e in scan(store, "r", "symbols").entries] == ["src.a.f"]
    assert len(scan(store, "r", "memory").entries) == 1
    assert len(scan(store, "r", "memoryTopic", topic="todo").entries) == 1
    assert scan(store, "r", "memoryTopic", topic="other").entries == ()
    store.clock.advance(10)
    assert [e.path for e in scan(store, "r", "files").entries] == ["src/a.py"]


def test_scan_refuses_unknown_scopes_and_missing_topics(store):
    with pytest.raises(InvalidInputError):
        scan(store, "r", "everything")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        scan(store, "r", "memoryTopic")


def test_scanning_the_code_of_an_unregistered_repository_is_not_found(store):
    for scope in ("files", "packages", "symbols"):
        with pytest.raises(NotFoundError):
            scan(store, "nobody", scope)
    assert scan(store, "nobody", "memory").entries == ()  # memory needs no registration
