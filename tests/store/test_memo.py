"""StoreMemo: values derived from a store, kept until the store's change sequence moves."""

from repocontext.store import STRUCTURAL, StoreMemo
from repocontext.store.keys import file_key


def test_a_value_is_kept_until_the_store_changes(store):
    computed = []

    def files(opened, repo_id):
        computed.append(repo_id)
        return opened.keys(STRUCTURAL, f"repo/{repo_id}/file/")

    memo = StoreMemo(files)
    store.put(STRUCTURAL, file_key("r", "a.py"), {"size": 1})
    assert memo.get(store, "r") == [file_key("r", "a.py")]
    assert memo.get(store, "r") == [file_key("r", "a.py")]
    assert computed == ["r"]
    assert memo.get(store, "other") == []  # (one value per key)
    store.put(STRUCTURAL, file_key("r", "b.py"), {"size": 1})
    assert memo.get(store, "r") == [file_key("r", "a.py"), file_key("r", "b.py")]
    assert computed == ["r", "other", "r"]
