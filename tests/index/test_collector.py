import gc

import pytest

from repocontext.index.files.walk import WalkOptions
from repocontext.index.run._collector import collector_paused


@pytest.fixture(autouse=True)
def collector_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_the_collector_is_off_inside_a_block_and_back_on_after_it():
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_overlapping_blocks_turn_it_back_on_only_as_the_last_one_ends():
    gc.enable()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # not nested: the first ends while the second runs
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_block_that_raises_turns_the_collector_back_on():
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("failed run")
    assert gc.isenabled()


def test_an_index_run_parses_without_the_collector_and_turns_it_back_on(workspace, repo):
    gc.enable()
    seen: list[bool] = []
    workspace.register_repo(repo, "demo")
    workspace._index.run(
        "demo", repo, WalkOptions(), on_progress=lambda *_: seen.append(gc.isenabled())
    )
    assert seen and not any(seen)
    assert gc.isenabled()
