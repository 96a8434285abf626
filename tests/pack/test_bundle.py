"""The context path does each thing once: hits carry what a bundle renders; budgets are ceilings."""

import subprocess
from pathlib import Path

import pytest

from repocontext.errors import BudgetTooSmallError
from repocontext.pack.bundle import ContextRequest, bundle_form, pack_result, wire_json
from repocontext.search.request import SearchRequest
from repocontext.settings import Settings
from repocontext.store import SystemClock
from repocontext.testing import make_repo
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "ws" / "demo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "loader.py").write_text(
        "class ConfigLoader:\n    def load_config(self, path):\n        return path\n"
    )
    (root / "app" / "server.py").write_text(
        "from app.loader import ConfigLoader\n\n\ndef serve():\n    return ConfigLoader()\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def workspace(tmp_path: Path, repo: Path):
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, background=False)
        yield opened


def test_a_bundle_renders_the_node_and_text_its_hits_were_ranked_from(workspace, repo):
    request = ContextRequest("demo", "config loader", detail="slices")
    result = workspace.search(SearchRequest.of("demo", request.task, k=request.top))
    top = result.hits[0]
    assert top.path == "app/loader.py" and top.node is not None and top.text is not None
    # The file changes and is indexed again: the bundle still renders what search read.
    (repo / "app" / "loader.py").write_text("class ConfigLoader:\n    VERSION = 2\n")
    workspace.bootstrap(repo, background=False)
    bundle = pack_result(workspace.store, SystemClock(), request, result)
    entry = next(e for e in bundle.entries if e.path == "app/loader.py")
    assert entry.content == top.text and "load_config" in entry.content
    assert entry.full_read_token_count == top.node.token_count


def test_a_context_call_without_a_session_writes_nothing(workspace):
    workspace.search(SearchRequest.of("demo", "config loader"))  # the keyword index is at the head
    head = workspace.store.last_seq()
    for detail in ("auto", "slices", "outline", "paths"):
        workspace.context(ContextRequest("demo", "config loader", detail=detail))  # type: ignore[arg-type]
    assert workspace.store.last_seq() == head
    workspace.context(ContextRequest("demo", "config loader", session="s"))
    assert workspace.store.last_seq() > head  # a named session records its receipts


def test_the_keyword_index_catches_up_once_per_store_change(workspace):
    workspace.search(SearchRequest.of("demo", "config loader"))
    index = workspace._search.keyword_index("demo")
    assert index.seq == workspace.store.last_seq()
    assert workspace._search.sync("demo") == 0  # at the head: nothing to apply
    workspace.context(ContextRequest("demo", "config loader", session="s"))  # a store write
    assert index.seq < workspace.store.last_seq()
    workspace.search(SearchRequest.of("demo", "config loader"))
    caught_up = index.seq
    assert caught_up == workspace.store.last_seq()
    workspace.search(SearchRequest.of("demo", "serve"))
    assert index.seq == caught_up and workspace._search.sync("demo") == 0


@pytest.mark.parametrize("detail", ["auto", "paths", "outline", "slices"])
def test_a_budget_below_the_smallest_answer_is_refused_never_exceeded(workspace, detail):
    request = ContextRequest("demo", "config loader", budget=60, detail=detail)
    with pytest.raises(BudgetTooSmallError) as refused:
        workspace.context(request)
    error = refused.value
    assert error.code == "context.budget_too_small" and error.budget == 60
    assert error.smallest > 60 and str(error.smallest) in error.hint
    answered = workspace.context(
        ContextRequest("demo", "config loader", budget=error.smallest, detail=detail)
    )
    assert answered.response_tokens <= answered.budget_tokens == error.smallest
    with pytest.raises(BudgetTooSmallError):
        workspace.context(
            ContextRequest("demo", "config loader", budget=error.smallest - 1, detail=detail)
        )
    for budget in range(error.smallest, error.smallest + 300, 7):
        bundle = workspace.context(ContextRequest("demo", "config loader", budget=budget))
        assert bundle.response_tokens <= bundle.budget_tokens == budget


# -- what a bundle is built of ---------------------------------------------------------------


def big_class(name: str, methods: int) -> str:
    body = "".join(
        f"    def step_{i}(self, value):\n"
        f"        '''Step {i} of the {name.lower()} pipeline.'''\n"
        + "".join(f"        value = value * {i} + {j}\n" for j in range(6))
        + "        return value\n\n"
        for i in range(methods)
    )
    return f"class {name}:\n    '''The {name.lower()}.'''\n\n    LIMIT = 3\n\n{body}"


CODE_FILES: dict[str, str | bytes] = {
    "shop/__init__.py": "",
    "shop/basket.py": (
        "import json\n\nTAX = 0.2\n\n\n"
        "def basket_total(items):\n    return sum(items) * (1 + TAX)\n"
    ),
    "shop/pipeline.py": big_class("Pipeline", 40).replace(
        "    def step_17(self, value):", "    def refund_order(self, value):"
    ),
    **{
        f"shop/module_{k}.py": "".join(
            f"def pipeline_helper_{k}_{i}(value):\n    '''Helps the pipeline.'''\n"
            f"    return value + {i}\n\n\n"
            for i in range(40)
        )
        for k in range(6)
    },
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shop")
    repo = make_repo(tmp / "ws" / "shop", CODE_FILES)
    settings = Settings(
        data_dir=tmp / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(repo, background=False)
        yield opened, repo


def test_the_text_block_is_each_units_header_then_its_code_verbatim(shop):
    workspace, repo = shop
    bundle = workspace.context(ContextRequest("shop", "pipeline refund order", budget=3000))
    expected = []
    for entry in bundle.entries:
        lines = (repo / entry.path).read_text().split("\n")
        for unit in entry.units:
            assert unit.kind in ("file", "slice") and unit.reason
            expected.append(
                f"{entry.path}:{unit.start_line}-{unit.end_line}  {unit.symbol or '-'}"
                f"  {unit.reason}\n"
            )
            code = "\n".join(lines[unit.start_line - 1 : unit.end_line]) + "\n"
            assert unit.text == code and unit.token_count == count_tokens(code)
            expected.append(code)
    assert bundle.text == "".join(expected)
    assert bundle.response_tokens == count_tokens(bundle.text) + count_tokens(
        wire_json(bundle_form(bundle))
    )
    assert '"content"' not in wire_json(bundle_form(bundle))
    with_code = workspace.context(
        ContextRequest("shop", "pipeline refund order", budget=3000, json_code=True)
    )
    assert [e.content for e in with_code.entries] == [
        e["content"]
        for e in bundle_form(with_code)["entries"]  # type: ignore[union-attr,index]
    ]


def test_a_small_file_that_ranks_first_is_sent_whole(shop):
    workspace, _ = shop
    bundle = workspace.context(ContextRequest("shop", "basket total tax", budget=2000))
    top = bundle.entries[0]
    assert top.path == "shop/basket.py"
    assert [(u.kind, u.reason, u.start_line, u.end_line) for u in top.units] == [
        ("file", "whole-file", 1, 7)
    ]


def test_the_best_ranked_file_is_widened_before_a_lower_one_is_sent_whole(shop):
    workspace, _ = shop
    bundle = workspace.context(ContextRequest("shop", "pipeline refund order", budget=2000))
    first, *rest = bundle.entries
    assert first.path == "shop/pipeline.py"
    # The helper modules mention the pipeline too, but rank lower: the first file's code around
    # the refund comes before any of them is sent whole (its share of the file's weight).
    assert first.token_count > 3 * max(e.token_count for e in rest)
    assert all(u.kind == "slice" for e in rest for u in e.units)
    wide = workspace.context(ContextRequest("shop", "pipeline refund order", budget=4000))
    assert [u.kind for u in wide.entries[0].units] == ["file"]


def test_a_method_comes_with_the_signature_of_its_class(shop):
    workspace, repo = shop
    bundle = workspace.context(ContextRequest("shop", "refund_order", budget=800))
    entry = next(e for e in bundle.entries if e.path == "shop/pipeline.py")
    lines = (repo / "shop/pipeline.py").read_text().split("\n")
    method = lines.index("    def refund_order(self, value):") + 1
    ranges = [(u.start_line, u.end_line, u.symbol, u.reason) for u in entry.units]
    assert ranges[0][0] == 1 and ranges[0][2] == "Pipeline"  # the class line, then the method
    assert any(a <= method <= b and s == "Pipeline.refund_order" for a, b, s, _ in ranges)
    assert bundle.text.startswith("shop/pipeline.py:1-")
    assert bundle.text.split("\n")[1] == "class Pipeline:"
    assert entry.units[-1].end_line < len(lines) - 10  # a slice, not the file


def test_a_slice_carries_the_blank_lines_after_its_definition_where_new_code_would_go(shop):
    workspace, repo = shop
    bundle = workspace.context(ContextRequest("shop", "refund_order", budget=800))
    entry = next(e for e in bundle.entries if e.path == "shop/pipeline.py")
    lines = (repo / "shop/pipeline.py").read_text().split("\n")
    unit = next(u for u in entry.units if u.symbol == "Pipeline.refund_order")
    assert not lines[unit.end_line - 1].strip()  # it ends on the blank line after the method
    assert lines[unit.end_line].strip()  # up to the next definition, not into it
    assert lines[unit.start_line - 1 : unit.end_line] == unit.text.split("\n")[:-1]


@pytest.mark.parametrize("budget", [1500, 3000, 6000])  # (the code: about 8000 tokens)
def test_a_bundle_fills_at_least_nine_tenths_of_a_budget_the_code_exceeds(shop, budget):
    workspace, _ = shop
    bundle = workspace.context(ContextRequest("shop", "pipeline helper value", budget=budget))
    assert 0.9 * budget <= bundle.response_tokens <= budget
    code = sum(u.token_count for e in bundle.entries for u in e.units)
    assert code >= 0.8 * bundle.response_tokens  # the response is mostly code


def test_auto_sends_code_whenever_some_fits_and_outlines_only_as_a_last_resort(shop):
    workspace, _ = shop
    many = workspace.context(ContextRequest("shop", "pipeline helper", top=50, budget=8000))
    assert many.detail == "slices" and many.total_tokens > 6000
    assert all(u.kind in ("file", "slice") for e in many.entries for u in e.units)
    smallest_code = None
    for budget in range(150, 400, 10):
        bundle = workspace.context(ContextRequest("shop", "pipeline helper", budget=budget))
        if bundle.detail == "slices" and bundle.entries:
            smallest_code = budget
            break
        slices = workspace.context(
            ContextRequest("shop", "pipeline helper", budget=budget, detail="slices")
        )
        assert not slices.entries  # auto fell back only because no code fits
    assert smallest_code is not None


def test_a_run_received_at_one_budget_is_not_sent_again_at_another(shop):
    workspace, _ = shop
    task = "pipeline refund order step"
    first = workspace.context(ContextRequest("shop", task, budget=1500, detail="slices"))
    held = {(e.path, u.start_line, u.end_line) for e in first.entries for u in e.units}
    receipts = frozenset(first.delivered_receipts)
    again = workspace.context(ContextRequest("shop", task, budget=6000, seen=receipts))
    assert {item.receipt for item in again.reused} == receipts
    for entry in again.entries:
        for unit in entry.units:
            assert not any(
                path == entry.path and a <= unit.end_line and unit.start_line <= b
                for path, a, b in held
            ), (entry.path, unit.start_line, unit.end_line)
    assert again.response_tokens >= 0.9 * 6000


def test_callees_and_covering_tests_of_the_best_file_come_as_second_choices(tmp_path):
    repo = make_repo(
        tmp_path / "ws" / "till",
        {
            "till/__init__.py": "",
            "till/money.py": "".join(
                f"def convert_{i}(amount):\n    return amount * {i}\n\n\n" for i in range(80)
            )
            + "def round_cents(amount):\n    return round(amount, 2)\n",
            "till/basket.py": (
                "from till.money import round_cents\n\n\n"
                "def basket_total(items):\n    return round_cents(sum(items))\n"
            ),
            "tests/test_basket.py": (
                "from till.basket import basket_total\n\n\n"
                "def test_sum():\n    assert basket_total([1, 2]) == 3\n"
            ),
        },
    )
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=repo.parent, reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(repo, background=False)
        bundle = workspace.context(ContextRequest("till", "basket total", budget=700))
    units = {e.path: [(u.symbol, u.reason) for u in e.units] for e in bundle.entries}
    assert units["till/basket.py"] == [(None, "whole-file")]
    assert ("round_cents", "callee") in units["till/money.py"]  # it names nothing of the task
    assert bundle.text.index("till/basket.py:") < bundle.text.index("till/money.py:")
