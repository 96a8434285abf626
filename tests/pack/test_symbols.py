"""Symbol sources: definitions by name, read from disk, with their enclosing headers."""

from pathlib import Path

import pytest

from repocontext.errors import InvalidInputError, NotFoundError
from repocontext.pack import MAX_MATCHES
from repocontext.settings import Settings
from repocontext.testing import make_repo
from repocontext.tokens import count_tokens
from repocontext.workspace import Workspace

pytestmark = pytest.mark.timeout(120)

SHAPES = (
    "import math\n"  # 1
    "\n"  # 2
    "\n"  # 3
    "@register(\n"  # 4
    "    'circle',\n"  # 5
    ")\n"  # 6
    "class Circle(\n"  # 7
    "    Shape,  # a base\n"  # 8
    "):\n"  # 9
    '    """A circle."""\n'  # 10
    "\n"  # 11
    "    def area(self):\n"  # 12
    "        return math.pi * self.r**2\n"  # 13
    "\n"  # 14
    "    class Unit:\n"  # 15
    "        def scale(self):\n"  # 16
    "            return 1\n"  # 17
    "\n"  # 18
    "\n"  # 19
    "def area(shape):\n"  # 20
    "    return shape.area()\n"  # 21
)
WIDGET = (
    "export class Widget<T> extends Base\n"  # 1
    "    implements Drawable {\n"  # 2
    "  draw(): void {\n"  # 3
    "    paint(this);\n"  # 4
    "  }\n"  # 5
    "}\n"  # 6
)
FILES = {
    "geo/shapes.py": SHAPES,
    "web/widget.ts": WIDGET,
    "geo/other.py": "class Square:\n    def area(self):\n        return 4\n",
    ".gitignore": "private/\n",
}


@pytest.fixture
def workspace(tmp_path: Path):
    make_repo(tmp_path / "ws" / "geo", FILES)
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=tmp_path / "ws", reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as opened:
        opened.bootstrap(tmp_path / "ws" / "geo", "geo", background=False)
        yield opened


def root_of(workspace: Workspace) -> Path:
    info = workspace.get_repo("geo")
    assert info is not None
    return Path(info.root)


def test_a_fully_qualified_name_serves_its_source_with_the_enclosing_header(workspace):
    answer = workspace.symbols("geo", ["geo.shapes.Circle.area"])
    (served,) = answer.symbols
    assert (served.path, served.kind, served.start_line, served.end_line) == (
        "geo/shapes.py",
        "method",
        12,
        13,
    )
    assert served.text == "    def area(self):\n        return math.pi * self.r**2\n"
    assert served.token_count == count_tokens(served.text)
    assert served.fresh is True
    (circle,) = served.enclosing
    assert circle.fq_name == "geo.shapes.Circle"
    assert circle.header == "".join(SHAPES.splitlines(keepends=True)[3:9])  # decorator..."):"
    assert answer.token_count == served.token_count + circle.token_count
    assert answer.missing == answer.omitted == answer.ambiguous == ()


def test_a_nested_member_lists_every_enclosing_definition_outermost_first(workspace):
    (served,) = workspace.symbols("geo", ["Circle.Unit.scale"]).symbols
    assert [e.fq_name for e in served.enclosing] == ["geo.shapes.Circle", "geo.shapes.Circle.Unit"]
    assert served.enclosing[1].header == "    class Unit:\n"


def test_a_brace_language_header_runs_to_the_line_that_opens_the_body(workspace):
    (served,) = workspace.symbols("geo", ["Widget.draw"]).symbols
    assert served.enclosing[0].header == WIDGET.split("  draw")[0]


def test_a_dotted_tail_matches_every_definition_ending_in_it(workspace):
    answer = workspace.symbols("geo", ["area"])
    assert [(s.fq_name, s.path) for s in answer.symbols] == [
        ("geo.other.Square.area", "geo/other.py"),
        ("geo.shapes.Circle.area", "geo/shapes.py"),
        ("geo.shapes.area", "geo/shapes.py"),
    ]
    (ambiguous,) = answer.ambiguous
    assert (ambiguous.name, ambiguous.matches, ambiguous.served) == ("area", 3, 3)


def test_an_ambiguous_name_serves_at_most_the_bound_and_counts_the_rest(tmp_path):
    body = "".join(f"class C{i}:\n    def run(self):\n        return {i}\n\n" for i in range(15))
    make_repo(tmp_path / "ws" / "many", {"many.py": body})
    settings = Settings(
        data_dir=tmp_path / "data", workspace_root=tmp_path / "ws", reconcile="off", embedder="off"
    )
    with Workspace.open(settings) as workspace:
        workspace.bootstrap(tmp_path / "ws" / "many", "many", background=False)
        answer = workspace.symbols("many", ["run"])
    assert len(answer.symbols) == MAX_MATCHES
    assert answer.ambiguous[0].matches == 15 and answer.ambiguous[0].served == MAX_MATCHES


def test_a_scope_written_with_double_colons_reads_as_a_dotted_name(workspace):
    answer = workspace.symbols("geo", ["Circle::area", "Widget::draw"])
    assert [s.fq_name for s in answer.symbols] == [
        "geo.shapes.Circle.area",
        "web.widget.Widget.draw",
    ]
    assert [s.name for s in answer.symbols] == ["Circle::area", "Widget::draw"]


def test_a_path_qualified_name_looks_in_that_file_only(workspace):
    answer = workspace.symbols("geo", ["geo/shapes.py::area", "geo/other.py::Square.area"])
    assert [s.fq_name for s in answer.symbols] == ["geo.shapes.area", "geo.other.Square.area"]


def test_an_unknown_name_is_reported_with_close_names_and_the_rest_is_served(workspace):
    answer = workspace.symbols("geo", ["Circel.area", "geo.shapes.area", "geo/shapes.py::Sqare"])
    assert [s.fq_name for s in answer.symbols] == ["geo.shapes.area"]
    unknown, in_file = answer.missing
    assert unknown.name == "Circel.area" and "no symbol" in unknown.reason
    assert unknown.suggestions[0] == "geo.shapes.Circle.area"
    assert in_file.reason == "geo/shapes.py defines no Sqare"


def test_a_refused_file_is_reported_per_name_with_its_code(workspace):
    root = root_of(workspace)
    (root / "private").mkdir()
    (root / "private" / "keys.py").write_text("def secret():\n    return 1\n")
    answer = workspace.symbols("geo", ["private/keys.py::secret", "../x.py::y", "Circle"])
    first, second = answer.missing
    assert first.reason.startswith("path.outside_workspace")
    assert second.reason.startswith("path.outside_workspace")
    assert [s.fq_name for s in answer.symbols] == ["geo.shapes.Circle"]


def test_a_changed_file_is_reindexed_so_the_lines_are_the_ones_on_disk(workspace):
    root = root_of(workspace)
    (root / "geo" / "shapes.py").write_text("# moved down\n\n" + SHAPES)
    (served,) = workspace.symbols("geo", ["Circle.area"]).symbols
    assert (served.start_line, served.end_line, served.fresh) == (14, 15, True)
    assert served.text.startswith("    def area(self):")


def test_a_definition_indexed_after_a_lookup_is_found_by_the_next_one(workspace):
    assert workspace.symbols("geo", ["Square.side"]).symbols == ()
    root = root_of(workspace)
    (root / "geo" / "other.py").write_text("class Square:\n    def side(self):\n        return 2\n")
    workspace.refresh("geo", ["geo/other.py"])
    (served,) = workspace.symbols("geo", ["Square.side"]).symbols
    assert served.fq_name == "geo.other.Square.side"


def test_a_definition_gone_from_its_file_is_reported_missing(workspace):
    root = root_of(workspace)
    (root / "geo" / "other.py").write_text("class Square:\n    pass\n")
    answer = workspace.symbols("geo", ["geo.other.Square.area"])
    assert answer.symbols == ()
    assert answer.missing[0].reason == "geo.other.Square.area is no longer in geo/other.py"


def test_a_read_only_store_parses_a_changed_file_instead_of_reindexing_it(workspace, tmp_path):
    root = root_of(workspace)
    settings = workspace.settings
    workspace.close()
    (root / "geo" / "shapes.py").write_text("\n\n\n" + SHAPES)
    with Workspace.open(settings, read_only=True) as reader:
        (served,) = reader.symbols("geo", ["Circle.area"]).symbols
    assert (served.start_line, served.fresh) == (15, False)
    assert served.text.startswith("    def area(self):")


def test_a_budget_serves_whole_definitions_in_order_and_lists_the_rest(workspace):
    whole = workspace.symbols("geo", ["geo.shapes.Circle", "geo.shapes.area"])
    circle, function = whole.symbols
    budget = function.cost + 1
    answer = workspace.symbols(
        "geo", ["geo.shapes.Circle", "geo.shapes.area"], budget_tokens=budget
    )
    assert [s.fq_name for s in answer.symbols] == ["geo.shapes.area"]
    (omitted,) = answer.omitted
    assert (omitted.fq_name, omitted.token_count) == ("geo.shapes.Circle", circle.cost)
    assert answer.token_count == function.cost <= budget


@pytest.mark.parametrize(
    "names",
    [[], [f"n{i}" for i in range(21)], ["  "], ["::area"], ["geo/shapes.py::"], ["a\x01b"]],
)
def test_malformed_name_lists_are_refused(workspace, names):
    with pytest.raises(InvalidInputError):
        workspace.symbols("geo", names)


def test_a_budget_below_one_and_an_unknown_repository_are_refused(workspace):
    with pytest.raises(InvalidInputError):
        workspace.symbols("geo", ["area"], budget_tokens=0)
    with pytest.raises(NotFoundError):
        workspace.symbols("nope", ["area"])
