"""Claims through the library: tokens, leases, the fence on write, backlog, FIFO waiting."""

import threading
import time
from pathlib import Path

import anyio
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from repocontext.claims import (
    ClaimRequiredError,
    ClaimResult,
    ClaimService,
    ClaimStatus,
    ReleasedTokenError,
    ReleaseResult,
    RenewResult,
    StaleTokenError,
    UnissuedTokenError,
    _backlog,
)
from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.memory import MemoryService, WrongFamilyError
from repocontext.settings import Settings
from repocontext.store import MEMORY, STRUCTURAL, Store
from repocontext.store.keys import file_key, repo_key
from repocontext.testing import FakeClock
from repocontext.workspace import Workspace


def register(store: Store) -> None:
    store.put(STRUCTURAL, repo_key("r"), {"repoId": "r", "root": "/nowhere"})


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock):
    with Store.open(tmp_path / "data", clock=clock) as opened:
        register(opened)
        yield opened


@pytest.fixture
def memory(store):
    return MemoryService(store)


@pytest.fixture
def claims(store):
    return ClaimService(store, default_lease_seconds=30, max_lease_seconds=300)


def entry(memory, title="item", topic="todo") -> str:
    return memory.remember("r", topic, title=title).key


def test_claim_contend_release_and_reclaim(memory, claims, clock):
    key = entry(memory)
    first = claims.claim(key, "alice")
    assert first.granted is True and first.fencing_token == 1
    assert first.grant.lease_expires_at == pytest.approx(clock.now() + 30)
    assert claims.claim(key, "bob") == ClaimResult(key, reason="contended")
    status = claims.status(key)
    assert status == ClaimStatus(
        key, exists=True, claimed=True, fencing_token=1, owner="alice",
        lease_expires_at=pytest.approx(clock.now() + 30),
    )  # fmt: skip
    assert status.is_held is True
    assert memory.recall(key).claim.owner == "alice"
    assert claims.release(key, 1) == ReleaseResult(key, fencing_token=1, released=True)
    assert claims.status(key).released_fencing_token == 1
    assert claims.status(key).claimed is False
    second = claims.claim(key, "bob", lease_seconds=10_000)
    assert second.fencing_token == 2
    assert second.grant.lease_expires_at == pytest.approx(
        clock.now() + 300
    )  # capped at the maximum


def test_the_fence_on_write_in_its_fixed_order(memory, claims):
    key = entry(memory)
    memory.update(key, fields={"body": "never claimed"}, fencing_token=7)  # 1. accepted
    token = claims.claim(key, "alice").fencing_token
    with pytest.raises(ClaimRequiredError) as required:  # 2.
        memory.update(key, fields={"body": "no token"})
    assert required.value.code == "claim.required"
    assert (
        memory.update(key, fields={"body": "holder"}, fencing_token=token).fields["body"]
        == "holder"
    )  # 7.
    with pytest.raises(UnissuedTokenError):  # 5.
        memory.update(key, fields={"body": "forged"}, fencing_token=token + 1)
    claims.release(key, token)
    with pytest.raises(ReleasedTokenError):  # 6.
        memory.update(key, fields={"body": "after release"}, fencing_token=token)
    memory.update(key, fields={"body": "anyone"})  # 3. released claim, no token
    newer = claims.claim(key, "bob").fencing_token
    with pytest.raises(StaleTokenError):  # 4.
        memory.update(key, fields={"body": "stale"}, fencing_token=token)
    with pytest.raises(StaleTokenError):
        memory.forget(key, fencing_token=token)
    assert memory.recall(key).fields["body"] == "anyone"
    assert memory.forget(key, fencing_token=newer).forgotten is True
    with pytest.raises(InvalidInputError):
        memory.update(key, fields={"body": "x"}, fencing_token=0)


def test_an_expired_lease_taken_over_supersedes_the_old_holder(memory, claims, clock):
    key = entry(memory)
    old = claims.claim(key, "alice", lease_seconds=10).fencing_token
    clock.advance(5)
    renewed = claims.renew(key, old, lease_seconds=10)
    assert renewed.granted is True and renewed.lease_shortened is False
    clock.advance(11)
    # Lapsed, but nobody took it: the holder may still renew and write.
    assert claims.renew(key, old).granted is True
    memory.update(key, fields={"title": "still mine"}, fencing_token=old)
    clock.advance(31)
    new = claims.claim(key, "bob").fencing_token
    assert new == old + 1
    assert claims.renew(key, old) == RenewResult(key, old, granted=False, reason="superseded")
    with pytest.raises(StaleTokenError):
        memory.update(key, fields={"title": "late write"}, fencing_token=old)
    assert memory.recall(key).fields["title"] == "still mine"
    assert claims.renew(key, new, lease_seconds=1000).lease_shortened is True


def test_release_reasons(memory, claims):
    key = entry(memory)
    missing = key.rsplit("/", 1)[0] + "/nope"
    assert claims.release(missing, 1).reason == "missing"
    assert claims.release(key, 1).reason == "unclaimed"
    token = claims.claim(key, "a").fencing_token
    assert claims.release(key, token).released is True
    assert claims.release(key, token).reason == "unclaimed"
    claims.claim(key, "b")
    assert claims.release(key, token).reason == "stale"
    assert claims.claim(missing, "a") == ClaimResult(missing, reason="missing")
    assert claims.status(missing).exists is False


def test_tokens_survive_restarts_and_forgetting(tmp_path: Path, clock):
    with Store.open(tmp_path / "d", clock=clock) as store:
        register(store)
        memory, claims = MemoryService(store), ClaimService(store)
        key = memory.remember("r", "todo", entry_id="job", title="t").key
        for expected in (1, 2, 3):
            token = claims.claim(key, "w").fencing_token
            assert token == expected
            claims.release(key, token)
        memory.forget(key)
        clock.advance(7 * 24 * 3600)  # past any tombstone grace period
        store.sweep()
    with Store.open(tmp_path / "d", clock=clock) as store:
        memory, claims = MemoryService(store), ClaimService(store)
        memory.remember("r", "todo", entry_id="job", title="again")
        assert claims.claim(key, "w").fencing_token == 4


def test_renew_and_release_refuse_a_token_never_issued(memory, claims):
    key = entry(memory)
    with pytest.raises(UnissuedTokenError):  # never claimed: no token was ever issued
        claims.renew(key, 1)
    assert claims.release(key, 1).reason == "unclaimed"
    token = claims.claim(key, "a").fencing_token
    with pytest.raises(UnissuedTokenError):
        claims.renew(key, token + 1)
    with pytest.raises(UnissuedTokenError):
        claims.release(key, token + 1)
    assert claims.status(key).fencing_token == token  # refused calls changed nothing
    claims.release(key, token)
    assert claims.renew(key, token).reason == "superseded"  # released: no longer holds
    missing = key.rsplit("/", 1)[0] + "/nope"
    assert claims.renew(missing, 1).reason == "missing"


def test_bad_input_is_refused(memory, claims):
    key = entry(memory)
    with pytest.raises(WrongFamilyError):
        claims.claim(file_key("r", "a.py"), "w")
    with pytest.raises(InvalidInputError):
        claims.claim(key, "")
    with pytest.raises(InvalidInputError):
        claims.claim(key, "w", lease_seconds=-1)
    with pytest.raises(InvalidInputError):
        claims.renew(key, -3)
    assert claims.status(key).claimed is False


def test_claim_next_drains_a_backlog_oldest_first(memory, claims, clock):
    items = [entry(memory, f"job {i}", topic="backlog") for i in range(4)]
    clock.advance(1)
    got = []
    for worker in ("w1", "w2", "w3"):
        result = claims.claim_next("r", "backlog", worker)
        got.append(result.key)
    assert got == items[:3]
    done = claims.claim_next("r", "backlog", "w4")
    memory.update(done.key, fields={"status": "done"}, fencing_token=done.fencing_token)
    claims.release(done.key, done.fencing_token)
    assert claims.claim_next("r", "backlog", "w5") == ClaimResult(None, reason="empty")
    clock.advance(31)  # the first three leases lapse: their items are claimable again
    again = claims.claim_next("r", "backlog", "w6")
    assert again.key == items[0] and again.fencing_token == 2


def test_claim_next_reads_on_past_many_claimed_entries(memory, claims):
    items = [entry(memory, f"job {i}", topic="backlog") for i in range(40)]
    got = [claims.claim_next("r", "backlog", f"w{i}").key for i in range(40)]
    assert got == items  # later calls skip pages of entries held by earlier ones
    assert claims.claim_next("r", "backlog", "late").reason == "empty"


def test_claim_next_refuses_a_bad_topic_or_an_unknown_repository(memory, claims):
    entry(memory, topic="decisions")
    for topic in ("", "a b", "x" * 65):
        with pytest.raises(InvalidInputError):
            claims.claim_next("r", topic, "w")  # "" used to claim from every topic
    for repo_id in ("nope", ""):
        with pytest.raises(NotFoundError):
            claims.claim_next(repo_id, "decisions", "w")


def test_claim_next_hands_out_entries_that_sort_before_or_reopen_behind_finished_ones(
    memory, claims
):
    """Before the fix a cursor past finished entries skipped both, for up to 100 calls."""
    late = memory.remember("r", "q", entry_id="m-item", title="m").key
    memory.update(late, fields={"status": "done"})
    assert claims.claim_next("r", "q", "w").reason == "empty"
    early = memory.remember("r", "q", entry_id="a-item", title="a").key
    got = claims.claim_next("r", "q", "w")
    assert got.key == early
    memory.update(early, fields={"status": "done"}, fencing_token=got.fencing_token)
    assert claims.claim_next("r", "q", "w").reason == "empty"
    memory.update(late, fields={"status": "open"})
    assert claims.claim_next("r", "q", "w").key == late


def test_claim_next_reads_the_whole_backlog_when_its_cursor_cannot_be_checked(
    memory, claims, store, clock, monkeypatch
):
    first = memory.remember("r", "q", entry_id="a", title="a").key
    memory.update(first, fields={"status": "done"})
    memory.remember("r", "q", entry_id="b", title="b", ttl_seconds=60)
    assert claims.claim_next("r", "q", "w").key.endswith("/b")  # cursor past a
    memory.update(first, fields={"status": "open"})
    clock.advance(8 * 24 * 3600)  # b expires; the feed is trimmed past the reopening
    store.sweep()
    got = claims.claim_next("r", "q", "w")
    assert got.key == first
    memory.update(first, fields={"status": "done"}, fencing_token=got.fencing_token)
    claims.release(first, got.fencing_token)
    assert claims.claim_next("r", "q", "w").reason == "empty"  # cursor past a again
    memory.update(first, fields={"status": "open"})
    entry(memory, topic="elsewhere")
    monkeypatch.setattr(_backlog, "CHANGES_CHECKED", 2)  # more changes than it checks
    assert claims.claim_next("r", "q", "w").key == first


BACKLOG_OPS = st.lists(
    st.tuples(st.sampled_from(["add", "done", "open", "next", "release"]), st.sampled_from("abc")),
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=BACKLOG_OPS)
@example(ops=[("add", "b"), ("done", "b"), ("next", "a"), ("add", "a"), ("next", "a")])
@example(ops=[("add", "b"), ("done", "b"), ("next", "a"), ("open", "b"), ("next", "a")])
def test_claim_next_always_claims_the_first_open_unclaimed_entry_in_key_order(
    tmp_path_factory, ops
):
    """Any sequence of adds (explicit ids, any order), finishing, reopening and claiming."""
    with Store.open(tmp_path_factory.mktemp("backlog"), clock=FakeClock()) as store:
        register(store)
        memory, claims = MemoryService(store), ClaimService(store)
        done: dict[str, bool] = {}  # id -> done, for every entry added
        held: dict[str, int] = {}  # id -> token of its live claim
        for op, name in ops:
            key = f"repo/r/mem/q/{name}"
            if op == "add":
                memory.remember("r", "q", entry_id=name, title=name, fencing_token=held.get(name))
                done.setdefault(name, False)
            elif op in ("done", "open") and name in done:
                status = {"status": op}
                memory.update(key, fields=status, fencing_token=held.get(name))
                done[name] = op == "done"
            elif op == "release" and name in held:
                claims.release(key, held.pop(name))
            elif op == "next":
                got = claims.claim_next("r", "q", "w")
                first = min((n for n in done if not done[n] and n not in held), default=None)
                assert got.key == (None if first is None else f"repo/r/mem/q/{first}")
                if first is not None:
                    held[first] = got.fencing_token


def test_waiters_are_served_in_arrival_order(tmp_path: Path):
    settings_ = Settings(data_dir=tmp_path / "data", embedder="off")
    with Workspace.open(settings_) as ws:
        register(ws.store)
        key = ws.remember("r", "todo", title="contended").key
        holder = ws.claim(key, "holder", lease_seconds=0.4)
        order: list[str] = []

        def wait_for(name: str) -> None:
            result = ws.claim(key, name, lease_seconds=0.3, max_wait_seconds=5)
            assert result.granted, result
            order.append(name)

        first = threading.Thread(target=wait_for, args=("first",))
        first.start()
        time.sleep(0.1)
        second = threading.Thread(target=wait_for, args=("second",))
        second.start()
        first.join(10)
        second.join(10)
        assert order == ["first", "second"]
        assert holder.fencing_token == 1
        assert ws.claim_status(key).fencing_token == 3
        busy = ws.claim(key, "late", max_wait_seconds=0.05)
        assert busy.granted is False and busy.reason == "timeout"
        assert not any(s for s in ws.store.get(MEMORY, key).doc.sets.get("waiters", ()))


OPS = st.lists(
    st.tuples(
        st.sampled_from(["claim", "renew", "release", "write", "expire", "merge", "remote"]),
        st.integers(0, 2),
    ),
    max_size=40,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_tokens_only_grow_and_stale_writes_never_land(tmp_path_factory, ops):
    """Any interleaving of claim, renew, release, expiry, writes and replica merges."""
    base = tmp_path_factory.mktemp("prop")
    clock = FakeClock()
    with Store.open(base / "a", clock=clock) as a, Store.open(base / "b", clock=clock) as b:
        register(a)
        register(b)
        memory_a, claims_a, claims_b = MemoryService(a), ClaimService(a), ClaimService(b)
        key = memory_a.remember("r", "todo", entry_id="x", title="0").key
        b.apply_update(MEMORY, key, a.export_update(MEMORY, key))
        held: dict[int, int] = {}  # worker -> token it believes it holds
        highest_seen = 0
        for op, worker in ops:
            if op == "claim":
                got = claims_a.claim(key, f"w{worker}")
                if got.granted:
                    assert got.fencing_token > highest_seen
                    held[worker] = got.fencing_token
            elif op == "renew" and worker in held:
                claims_a.renew(key, held[worker])
            elif op == "release" and worker in held:
                claims_a.release(key, held[worker])
            elif op == "expire":
                clock.advance(31 + worker * 30)
            elif op == "merge":
                a.apply_update(MEMORY, key, b.export_update(MEMORY, key))
            elif op == "remote":  # the other replica issues a claim, then is merged in
                b.apply_update(MEMORY, key, a.export_update(MEMORY, key))
                claims_b.claim(key, f"remote{worker}")
                a.apply_update(MEMORY, key, b.export_update(MEMORY, key))
            elif op == "write" and worker in held:
                token = held[worker]
                doc = a.get(MEMORY, key).doc
                fence = doc.maxima.get("fence", 0)
                try:
                    memory_a.update(
                        key, fields={"title": f"w{worker}:{token}"}, fencing_token=token
                    )
                except (StaleTokenError, UnissuedTokenError, ReleasedTokenError):
                    assert token != fence or doc.fields.get("claimReleased")
                else:
                    assert token == fence  # only the newest token's write lands
            fence = a.get(MEMORY, key).doc.maxima.get("fence", 0)
            assert fence >= highest_seen  # never backwards, merges included
            highest_seen = fence


@pytest.mark.anyio
async def test_claim_async_waits_on_the_event_loop_until_the_holder_releases(memory, claims, store):
    key = entry(memory)
    holder = claims.claim(key, "holder")
    results = []

    async def wait() -> None:
        results.append(await claims.claim_async(key, "waiter", max_wait_seconds=30))

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        started = time.monotonic()
        while not store.get(MEMORY, key).doc.sets.get("waiters"):
            assert time.monotonic() - started < 10, "the waiter never queued"
            await anyio.sleep(0.01)
        claims.release(key, holder.fencing_token)
    [got] = results
    assert (got.granted, got.fencing_token, got.grant.owner) == (True, 2, "waiter")
    assert not store.get(MEMORY, key).doc.sets.get("waiters")


class CancellingClock(FakeClock):
    """A fake clock that cancels ``scope`` when first read from an anyio worker thread.

    ``_try`` reads the clock first thing, in the worker thread of an attempt: the cancel
    then arrives while the attempt runs, the race a caller who gives up can hit.
    """

    scope: anyio.CancelScope | None = None

    def now(self) -> float:
        scope, self.scope = self.scope, None
        if scope is not None:
            anyio.from_thread.run_sync(scope.cancel)
        return super().now()


@pytest.mark.anyio
async def test_claim_async_releases_a_claim_granted_as_its_caller_cancelled(tmp_path: Path):
    clock = CancellingClock()
    with Store.open(tmp_path / "data", clock=clock) as store:
        register(store)
        memory, claims = MemoryService(store), ClaimService(store)
        key = entry(memory)
        with anyio.CancelScope() as scope:
            clock.scope = scope
            await claims.claim_async(key, "gone")
        assert scope.cancelled_caught
        status = claims.status(key)
        assert (status.claimed, status.released_fencing_token) == (False, 1)
        assert claims.claim(key, "next").fencing_token == 2
