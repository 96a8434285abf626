"""Memory entries through the library: fields, tags, links, TTL rules, staleness, neighbors.

Real store, a real git repository indexed by the real indexer, an injected clock (no sleeps).
"""

import itertools
from pathlib import Path

import pytest

from repocontext.entries import scan
from repocontext.errors import InvalidInputError, NotFoundError, RepoContextError, StaleTokenError
from repocontext.memory import (
    EntryClaim,
    Forgotten,
    MemoryNotFoundError,
    NeighborNode,
    StaleLink,
    TopicCount,
    WrongFamilyError,
)
from repocontext.memory.service import MAX_TTL_SECONDS
from repocontext.settings import Settings
from repocontext.store import MEMORY
from repocontext.store.keys import family_prefix, file_key, mem_key, symbol_key
from repocontext.testing import FakeClock, make_repo
from repocontext.workspace import Workspace

UTIL = "def parse(text):\n    return text.split()\n\n\ndef other():\n    return 1\n"


FILES = {
    "pkg/__init__.py": "",
    "pkg/util.py": UTIL,
    "pkg/app.py": "from pkg.util import parse\n",
}


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def ws(tmp_path: Path, clock: FakeClock):
    repo = make_repo(tmp_path / "ws" / "demo", FILES)
    settings = Settings(data_dir=tmp_path / "data", workspace_root=repo.parent, embedder="off")
    with Workspace.open(settings, clock=clock) as workspace:
        workspace.bootstrap(repo, "demo", background=False)
        workspace.repo = repo  # type: ignore[attr-defined]
        yield workspace


def memory_records(ws) -> int:
    return ws.store.count(MEMORY, family_prefix("demo", "mem"))


def test_remember_recall_and_merge(ws):
    view = ws.remember(
        "demo",
        "decisions",
        kind="decision",
        title="Use LMDB",
        body="Embedded, durable.",
        author="agent-1",
        provenance="design review",
        tags=["storage", "storage", " db "],
    )
    assert view.exists is True
    assert view.kind == "decision"
    assert view.topic == "decisions"
    assert view.key == mem_key("demo", "decisions", view.id)
    assert view.fields["kind"] == "decision"
    assert view.fields["title"] == "Use LMDB"
    assert view.fields["createdAt"] == ws.store.clock.now()
    assert view.tags == ("db", "storage")
    assert view.links == {}
    assert view.expires_at is None and view.stale is False
    # remember with the same id merges: fields given replace theirs, tags add up.
    again = ws.remember("demo", "decisions", entry_id=view.id, body="Fast.", tags=["x"])
    assert again.fields["title"] == "Use LMDB"
    assert again.fields["body"] == "Fast."
    assert again.fields["kind"] == "decision"  # not reset to the default
    assert again.tags == ("db", "storage", "x")
    assert ws.recall_note(view.key) == again


def test_generated_ids_sort_by_creation(ws, clock):
    keys = []
    for i in range(30):
        keys.append(ws.remember("demo", "todo", title=f"item {i}").id)
        if i % 7 == 0:
            clock.advance(0.001)
    assert keys == sorted(keys)
    assert len(set(keys)) == 30
    assert all(len(k) == 26 for k in keys)


def test_update_merges_and_clears(ws):
    key = ws.remember("demo", "notes", title="t", body="b", tags=["a", "b"]).key
    view = ws.update(key, fields={"body": None, "author": "me"}, add_tags=["c"], remove_tags=["a"])
    assert "body" not in view.fields
    assert view.fields["author"] == "me"
    assert view.fields["title"] == "t"
    assert view.tags == ("b", "c")
    with pytest.raises(InvalidInputError, match="unknown field"):
        ws.update(key, fields={"color": "red"})
    with pytest.raises(InvalidInputError, match="kind"):
        ws.update(key, fields={"kind": "rumour"})


def test_unknown_keys_and_wrong_families_are_clear_errors(ws):
    missing = mem_key("demo", "notes", "nope")
    with pytest.raises(MemoryNotFoundError) as raised:
        ws.update(missing, fields={"title": "x"})
    assert raised.value.code == "memory.not_found"
    with pytest.raises(WrongFamilyError) as wrong:
        ws.update(file_key("demo", "pkg/util.py"), fields={"title": "x"})
    assert wrong.value.code == "memory.wrong_family"
    with pytest.raises(WrongFamilyError):
        ws.neighbors("not a key at all")
    with pytest.raises(NotFoundError):
        ws.remember("nosuchrepo", "notes", title="x")
    assert ws.recall_note(missing).exists is False
    assert ws.forget(missing) == Forgotten(missing, forgotten=False)
    assert memory_records(ws) == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ttl_seconds": 0}, "positive"),
        ({"ttl_seconds": -5}, "positive"),
        ({"ttl_seconds": float("nan")}, "positive"),
        ({"body": "x" * 64_001}, "at most 64,000"),
        ({"title": "t" * 301}, "at most 300"),
        ({"tags": [""]}, "tag"),
        ({"tags": ["a\x07b"]}, "control"),
        ({"tags": [f"t{i}" for i in range(33)]}, "at most 32"),
        ({"kind": "gossip"}, "kind"),
        ({"add_links": {"bad relation": ["repo/demo/file/pkg/util.py"]}}, "relation"),
        ({"add_links": {"related": ["repo/other/file/a.py"]}}, "belongs to repository"),
        ({"add_links": {"related": ["repo/demo/xref/name:x"]}}, "cannot link"),
        ({"add_links": {"related": ["no/such/grammar"]}}, "not a record key"),
        ({"entry_id": "has space"}, "entry id"),
    ],
)
def test_bad_input_is_refused_and_stores_nothing(ws, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        ws.remember("demo", "notes", **{"title": "t", **kwargs})
    assert memory_records(ws) == 0


@pytest.mark.parametrize("topic", ["", "has/slash", "white space", "-lead", "x" * 65])
def test_invalid_topics_are_refused(ws, topic):
    with pytest.raises(InvalidInputError, match="topic"):
        ws.remember("demo", topic, title="t")
    assert memory_records(ws) == 0


def test_ttl_rules(ws, clock):
    short = ws.remember("demo", "notes", title="short", ttl_seconds=100)
    assert short.remaining_seconds == 100
    key = short.key
    clock.advance(40)
    # A shorter TTL never shortens; the remaining TTL is kept by an update without one.
    assert ws.update(key, ttl_seconds=10).remaining_seconds == 60
    assert ws.update(key, fields={"body": "b"}).remaining_seconds == 60
    assert ws.update(key, ttl_seconds=500).remaining_seconds == 500
    ws.set_default_ttl("demo", 30)
    assert ws.default_ttl("demo") == 30
    fresh = ws.remember("demo", "notes", title="defaulted")
    assert fresh.remaining_seconds == 30
    explicit = ws.remember("demo", "notes", title="explicit", ttl_seconds=1000)
    assert explicit.remaining_seconds == 1000
    # The default applies to new entries only.
    assert ws.update(key, fields={"title": "x"}).remaining_seconds == 500
    ws.set_default_ttl("demo", None)
    durable = ws.remember("demo", "other", title="durable")
    assert durable.remaining_seconds is None
    with pytest.raises(InvalidInputError):
        ws.set_default_ttl("demo", -1)
    clock.advance(31)
    # Expired entries vanish from recall, topics and scans.
    assert ws.recall_note(fresh.key).exists is False
    assert ws.list_topics("demo") == [TopicCount("notes", 2), TopicCount("other", 1)]
    listed = {e.key for e in scan(ws.store, "demo", "memory").entries}
    assert listed == {key, explicit.key, durable.key}
    with pytest.raises(MemoryNotFoundError):
        ws.update(fresh.key, fields={"title": "back?"})


def test_forget_and_lapse(ws, clock):
    durable = ws.remember("demo", "notes", title="durable").key
    long = ws.remember("demo", "notes", title="long", ttl_seconds=3600).key
    gone = ws.remember("demo", "notes", title="gone").key
    assert ws.forget(gone) == Forgotten(gone, forgotten=True)
    assert ws.recall_note(gone).exists is False
    lapsed = ws.forget(durable, lapse=True)
    assert lapsed.lapses_at == pytest.approx(clock.now() + 60)
    # A lapse cannot shorten a later expiry.
    assert ws.forget(long, lapse=True, lapse_seconds=5).lapses_at == pytest.approx(
        clock.now() + 3600
    )
    with pytest.raises(InvalidInputError):
        ws.forget(long, lapse=True, lapse_seconds=0)
    clock.advance(61)
    assert ws.recall_note(durable).exists is False
    assert ws.recall_note(long).exists is True
    # Remembering a forgotten id starts a new entry: nothing of the old one comes back.
    back = ws.remember("demo", "notes", entry_id=gone.rsplit("/", 1)[1], body="new")
    assert back.fields.get("title") is None and back.fields["body"] == "new"


@pytest.mark.parametrize("end", ["expired", "swept", "forgotten"])
def test_remembering_an_id_whose_entry_ended_makes_a_new_durable_entry(ws, clock, end):
    util = file_key("demo", "pkg/util.py")
    links = {"about": [util]}
    old = ws.remember(
        "demo", "notes", entry_id="a", body="OLD", tags=["old"], add_links=links, ttl_seconds=30
    )
    ws.update(old.key, fields={"status": "done"})
    if end == "forgotten":  # while its expiry is still ahead
        assert ws.forget(old.key).forgotten is True
    else:
        clock.advance(31)
    if end == "swept":
        assert ws.store.sweep().expired == 1
    new = ws.remember("demo", "notes", entry_id="a", title="new", tags=["new"])
    # Only what was sent: no old body, status, tag, link or expiry comes back.
    assert new.fields == {"kind": "note", "title": "new", "createdAt": clock.now()}
    assert (new.tags, new.links, new.expires_at) == (("new",), {}, None)
    assert ws.recall_note(old.key) == new
    assert ws.list_topics("demo") == [TopicCount("notes", 1)]
    assert [e.key for e in scan(ws.store, "demo", "memory").entries] == [old.key]
    assert ws.update(old.key, fields={"body": "b"}).fields["body"] == "b"
    clock.advance(10**6)
    assert ws.store.sweep().expired == 0
    assert ws.recall_note(old.key).exists is True


def test_remembering_an_ended_id_with_a_ttl_gets_that_ttl_and_nothing_old(ws, clock):
    old = ws.remember("demo", "n", entry_id="a", body="OLD", tags=["o"], ttl_seconds=1)
    key = old.key
    clock.advance(2)
    again = ws.remember("demo", "n", entry_id="a", title="newer", ttl_seconds=600)
    assert "body" not in again.fields and again.tags == ()
    assert again.remaining_seconds == 600
    # Forgotten an hour before its expiry, remembered with a shorter TTL: the new one holds.
    ws.update(key, ttl_seconds=3600)
    ws.forget(key)
    assert ws.remember("demo", "n", entry_id="a", ttl_seconds=10).remaining_seconds == 10
    clock.advance(11)
    assert ws.recall_note(key).exists is False


def test_the_claim_state_carries_over_a_forget_or_expiry_and_the_view_shows_the_token(ws, clock):
    key = ws.remember("demo", "backlog", entry_id="a", title="t").key
    first = ws.claim(key, "w1").fencing_token
    ws.forget(key, fencing_token=first)
    back = ws.remember("demo", "backlog", entry_id="a", title="again")
    # The claim fields went with the entry; the highest token issued did not.
    assert back.claim == EntryClaim(
        claimed=False, owner=None, fencing_token=first, lease_expires_at=None, released=False
    )
    second = ws.claim(key, "w2", lease_seconds=3600).fencing_token
    assert second == first + 1
    with pytest.raises(StaleTokenError):
        ws.update(key, fields={"body": "late"}, fencing_token=first)
    # An entry that expires under a live claim: remembered again by the holder, still held.
    ws.update(key, ttl_seconds=10, fencing_token=second)
    clock.advance(11)
    held = ws.remember("demo", "backlog", entry_id="a", title="3rd", fencing_token=second)
    assert held.claim.claimed is True and held.claim.fencing_token == second
    assert held.fields["title"] == "3rd" and held.expires_at is None


def test_update_with_null_clears_status_and_refuses_to_clear_kind(ws):
    key = ws.remember("demo", "backlog", kind="decision", title="t").key
    assert ws.update(key, fields={"status": "done"}).fields["status"] == "done"
    assert "status" not in ws.update(key, fields={"status": None}).fields
    with pytest.raises(InvalidInputError, match="kind cannot be cleared"):
        ws.update(key, fields={"kind": None, "title": "not stored"})
    assert ws.recall_note(key).fields == {
        "kind": "decision",
        "title": "t",
        "createdAt": ws.store.clock.now(),
    }


def test_ttls_longer_than_ten_years_are_cut_to_ten_years(ws, clock):
    made = ws.remember("demo", "n", title="t", ttl_seconds=1e17)
    assert made.remaining_seconds == MAX_TTL_SECONDS
    key = ws.remember("demo", "n", title="u").key
    assert ws.update(key, ttl_seconds=1e300).remaining_seconds == MAX_TTL_SECONDS
    other = ws.remember("demo", "n", title="v").key
    lapsed = ws.forget(other, lapse=True, lapse_seconds=1e300)
    assert lapsed.lapses_at == pytest.approx(clock.now() + MAX_TTL_SECONDS)
    ws.set_default_ttl("demo", 1e300)
    assert ws.default_ttl("demo") == MAX_TTL_SECONDS
    with pytest.raises(InvalidInputError):
        ws.remember("demo", "n", title="w", ttl_seconds=float("inf"))


def test_links_capture_targets_and_report_drift(ws):
    util = ws.repo / "pkg" / "util.py"
    file_target = file_key("demo", "pkg/util.py")
    parse_target = symbol_key("demo", "pkg.util.parse")
    other_target = symbol_key("demo", "pkg.util.other")
    note = ws.remember("demo", "notes", title="target", body="linked from another")
    view = ws.remember(
        "demo",
        "gotchas",
        title="parse splits on whitespace",
        add_links={
            "anchoredTo": [file_target, parse_target],
            "related": [other_target, note.key],
        },
    )
    key = view.key
    assert view.links == {
        "anchoredTo": tuple(sorted([file_target, parse_target])),
        "related": tuple(sorted([other_target, note.key])),
    }
    assert view.stale is False
    assert not any(name.startswith("linkDigest") for name in view.fields)
    # Lines above `other` shift: the file changed, `other` did not; `parse` is untouched.
    util.write_text("# header\n" + UTIL)
    ws.bootstrap(ws.repo, "demo", background=False)
    stale = ws.recall_note(key)
    assert stale.stale is True
    assert stale.stale_links == (StaleLink("anchoredTo", file_target, "changed"),)
    # parse's body changes: now its link is stale too.
    util.write_text("# header\n" + UTIL.replace("text.split()", "text.split(',')"))
    ws.bootstrap(ws.repo, "demo", background=False)
    reasons = {(s.key, s.reason) for s in ws.recall_note(key).stale_links}
    assert reasons == {(file_target, "changed"), (parse_target, "changed")}
    # Re-adding a link captures the target again.
    fixed = ws.update(key, add_links={"anchoredTo": [file_target, parse_target]})
    assert fixed.stale is False
    # A deleted file (and its symbols) and a forgotten memory entry are missing.
    util.unlink()
    ws.bootstrap(ws.repo, "demo", background=False)
    ws.forget(note.key)
    missing = {(s.key, s.reason) for s in ws.recall_note(key).stale_links}
    assert missing == {
        (file_target, "missing"),
        (parse_target, "missing"),
        (other_target, "missing"),
        (note.key, "missing"),
    }
    removed = ws.update(key, remove_links={"related": [other_target, note.key]})
    assert removed.links == {"anchoredTo": tuple(sorted([file_target, parse_target]))}


def chain(ws, n: int) -> list[str]:
    keys = [ws.remember("demo", "graph", entry_id=f"n{i}", title=str(i)).key for i in range(n)]
    for a, b in itertools.pairwise(keys):
        ws.update(a, add_links={"partOf": [b]})
    return keys


def test_neighbors_walks_breadth_first_with_limits(ws):
    keys = chain(ws, 5)
    ws.update(keys[0], add_links={"related": [keys[2], file_key("demo", "pkg/app.py")]})
    ws.update(keys[4], add_links={"partOf": [keys[0]]})  # a cycle back to the start
    one = ws.neighbors(keys[0])
    assert [(n.key, n.depth, n.via) for n in one.nodes] == [
        (keys[1], 1, "partOf"),
        (file_key("demo", "pkg/app.py"), 1, "related"),
        (keys[2], 1, "related"),
    ]
    assert one.truncated is False
    three = ws.neighbors(keys[0], depth=3)
    assert [(n.key, n.depth) for n in three.nodes][-2:] == [(keys[3], 2), (keys[4], 3)]
    assert len({n.key for n in three.nodes}) == len(three.nodes)
    only = ws.neighbors(keys[0], relation="partOf", depth=3)
    assert [n.key for n in only.nodes] == keys[1:4]
    cut = ws.neighbors(keys[0], depth=3, max_nodes=2)
    assert len(cut.nodes) == 2 and cut.truncated is True
    clamped = ws.neighbors(keys[0], depth=99, max_nodes=0)
    assert len(clamped.nodes) == 1 and clamped.truncated is True
    ws.forget(keys[1])
    after = ws.neighbors(keys[0], depth=3)
    assert after.nodes[0] == NeighborNode(
        keys[1], exists=False, depth=1, via="partOf", from_key=keys[0], stale=True
    )
    with pytest.raises(MemoryNotFoundError):
        ws.neighbors(keys[1])


def test_errors_carry_codes_and_hints(ws):
    for call in (
        lambda: ws.remember("demo", "bad topic", title="t"),
        lambda: ws.update(mem_key("demo", "a", "b"), fields={}),
        lambda: ws.recall_note(file_key("demo", "pkg/app.py")),
    ):
        with pytest.raises(RepoContextError) as raised:
            call()
        wire = raised.value.to_dict()
        assert wire["code"] in {"input.invalid", "memory.not_found", "memory.wrong_family"}
        assert wire["hint"]


@pytest.mark.parametrize("repo_id", ["", "r" * 600])
def test_remembering_under_an_id_no_key_can_hold_is_not_found(ws, repo_id):
    with pytest.raises(NotFoundError):
        ws.remember(repo_id, "notes", title="x")


def test_an_entry_reads_its_kind_title_body_and_status_as_text(ws):
    made = ws.remember("demo", "backlog", kind="decision", title="t", body="b")
    assert (made.kind, made.title, made.body, made.status) == ("decision", "t", "b", None)
    done = ws.update(made.key, fields={"status": "done", "body": None})
    assert (done.body, done.status) == (None, "done")
    gone = ws.recall_note(mem_key("demo", "backlog", "nope"))
    assert (gone.exists, gone.kind, gone.title, gone.fields, gone.stale) == (
        False,
        None,
        None,
        {},
        False,
    )
