"""Hypothesis properties: the CRDT merge laws over random field operations."""

from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.store.document import DocPatch, doc_merge, read_doc
from repocontext.store.document import apply_patch as apply_patch_meta
from repocontext.store.records import Envelope, FlagState, flag_merge, lww_merge


def apply_patch(*args, **kwargs):
    state, meta = apply_patch_meta(*args, **kwargs)
    view = read_doc(state)
    assert (meta.hlc, meta.expires_at_ms, meta.deleted) == (
        view.hlc,
        view.expires_at_ms,
        view.deleted,
    )
    return state


REPLICAS = [11, 22, 33]
names = st.sampled_from(["title", "body", "kind"])
elements = st.sampled_from(["a", "b", "c"])
values = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=3))


def patches(*, drops: bool = True) -> st.SearchStrategy[DocPatch]:
    return st.builds(
        DocPatch,
        set_fields=st.dictionaries(names, values, max_size=2),
        add=st.dictionaries(st.just("tags"), st.lists(elements, max_size=2), max_size=1),
        remove=st.dictionaries(st.just("tags"), st.lists(elements, max_size=2), max_size=1),
        raise_max=st.dictionaries(st.just("fence"), st.integers(0, 50), max_size=1),
        expires_at_ms=st.one_of(st.none(), st.integers(0, 10_000)),
        delete=st.booleans(),
        drop_expiry=st.booleans() if drops else st.just(False),
    )


@st.composite
def histories(draw, *, drops: bool = True):
    """Three replicas, each applying patches to its own copy after syncing some of the others.

    With ``drops`` some patches drop the expiry they observed (a record written anew).
    """
    states = dict.fromkeys(REPLICAS, b"")
    hlc = 1
    for _ in range(draw(st.integers(1, 8))):
        replica = draw(st.sampled_from(REPLICAS))
        if draw(st.booleans()):
            other = draw(st.sampled_from(REPLICAS))
            if states[other]:
                states[replica] = doc_merge(states[replica] or states[other], states[other])
        hlc += draw(st.integers(1, 3))
        patch = draw(patches(drops=drops))
        states[replica] = apply_patch(states[replica] or None, patch, client_id=replica, hlc=hlc)
    return [s for s in states.values() if s]


def merged(*states):
    result = states[0]
    for state in states[1:]:
        result = doc_merge(result, state)
    return read_doc(result)


@settings(max_examples=150, deadline=None)
@given(histories())
def test_document_merge_is_commutative_associative_and_idempotent(states):
    if len(states) < 2:
        states = states * 2
    a, b = states[0], states[1]
    c = states[2] if len(states) > 2 else states[0]
    assert merged(a, b) == merged(b, a)
    assert merged(merged_bytes(a, b), c) == merged(a, merged_bytes(b, c))
    assert merged(a, a) == read_doc(a)
    assert merged(a, b, b) == merged(a, b)


def merged_bytes(a, b):
    return doc_merge(a, b)


@settings(max_examples=150, deadline=None)
@given(histories(), st.integers(0, 50))
def test_a_lower_fencing_token_never_wins_a_merge(states, low):
    top = max((read_doc(s).maxima.get("fence", 0) for s in states), default=0)
    lowered = apply_patch(states[0], DocPatch(raise_max={"fence": low}), client_id=99, hlc=10**6)
    result = merged(*states, lowered)
    assert result.maxima["fence"] == max(top, low)


@settings(max_examples=150, deadline=None)
@given(histories(drops=False), st.integers(0, 10_000))
def test_expiry_never_moves_earlier(states, new_expiry):
    before = merged(*states).expires_at_ms
    patched = apply_patch(states[0], DocPatch(expires_at_ms=new_expiry), client_id=11, hlc=10**6)
    after = merged(*states, patched).expires_at_ms
    assert after == max(before if before is not None else -1, new_expiry)


@settings(max_examples=100, deadline=None)
@given(histories(), st.integers(0, 10_000))
def test_a_drop_clears_only_the_expiry_it_observed(states, concurrent):
    base = states[0]
    dropped = apply_patch(base, DocPatch(drop_expiry=True), client_id=71, hlc=10**6)
    assert read_doc(dropped).expires_at_ms is None
    raised = apply_patch(base, DocPatch(expires_at_ms=concurrent), client_id=72, hlc=10**6 + 1)
    assert merged(dropped, raised) == merged(raised, dropped)
    assert merged(dropped, raised).expires_at_ms == concurrent


@settings(max_examples=100, deadline=None)
@given(histories())
def test_a_concurrent_add_survives_a_remove_it_did_not_observe(states):
    base = states[0]
    remover = apply_patch(base, DocPatch(remove={"tags": ["a"]}), client_id=71, hlc=10**6)
    adder = apply_patch(base, DocPatch(add={"tags": ["a"]}), client_id=72, hlc=10**6 + 1)
    view = merged(remover, adder)
    assert view.deleted or "a" in view.sets.get("tags", frozenset())


@settings(max_examples=100, deadline=None)
@given(histories())
def test_the_later_write_of_a_field_wins_regardless_of_replica_order(states):
    base = states[0]
    early = apply_patch(base, DocPatch(set_fields={"title": "early"}), client_id=99, hlc=10**6)
    late = apply_patch(base, DocPatch(set_fields={"title": "late"}), client_id=1, hlc=10**6 + 5)
    assert merged(early, late).fields.get("title") == "late"
    assert merged(late, early).fields.get("title") == "late"


envelopes = st.builds(
    Envelope,
    hlc=st.integers(0, 20),
    replica=st.sampled_from(["a", "b"]),
    value=values,
    expires_at_ms=st.one_of(st.none(), st.integers(0, 100)),
    deleted=st.booleans(),
)


@given(envelopes, envelopes, envelopes)
def test_lww_envelope_merge_obeys_the_laws(a, b, c):
    if a.stamp() == b.stamp() and a != b:
        return  # one replica never issues two values at one stamp
    assert lww_merge(a, b) == lww_merge(b, a) or a.stamp() == b.stamp()
    assert lww_merge(lww_merge(a, b), c).stamp() == lww_merge(a, lww_merge(b, c)).stamp()
    assert lww_merge(a, a) == a


tag_sets = st.frozensets(st.sampled_from(["t1", "t2", "t3", "t4"]), max_size=4)
flags = st.builds(lambda adds, rem: FlagState(adds, adds & rem), tag_sets, tag_sets)


@given(flags, flags, flags)
def test_observed_remove_flag_merge_obeys_the_laws(a, b, c):
    assert flag_merge(a, b) == flag_merge(b, a)
    assert flag_merge(flag_merge(a, b), c) == flag_merge(a, flag_merge(b, c))
    assert flag_merge(a, a) == a


def test_a_flag_added_concurrently_with_a_remove_stays_present():
    base = FlagState(frozenset({"t1"}))
    removed = FlagState(base.adds, base.adds)
    readded = FlagState(base.adds | {"t2"}, frozenset())
    assert flag_merge(removed, readded).present
