"""Architecture rules from HOUSE_STYLE.md: import layering, no import cycles, the size cap."""

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("repocontext", "lattice_runtime")

# Imports flow one way: a module may import its own layer or lower ones.
LAYERS = {
    "repocontext.errors": 0,
    "repocontext.testing": 0,
    "repocontext.tokens": 0,
    "repocontext.store": 1,
    "repocontext.auth": 2,
    "repocontext.index": 2,
    "repocontext.memory": 2,
    "repocontext.claims": 2,
    "repocontext.arguments": 3,
    "repocontext.search": 3,
    "repocontext.pack": 4,
    "repocontext.settings": 5,
    "repocontext.workspace": 5,
    "repocontext.entries": 5,
    "repocontext.wire": 5,
    "repocontext.telemetry": 5,
    "repocontext.mcp": 6,
    "repocontext.http": 6,
    "repocontext.supervisor": 7,
    "repocontext.server": 7,
    "repocontext.cli": 8,
    "repocontext.__main__": 9,
    "repocontext": 9,
}
ADAPTERS = {"repocontext.mcp", "repocontext.http", "repocontext.cli"}
ADAPTER_LIBRARIES = {"mcp", "fastapi", "starlette", "uvicorn", "typer", "click", "rich", "httpx"}
DOMAIN_LAYER_MAX = 5

# Packages of one layer import each other only in these directions (never back, so the
# packages of a layer form no cycle), and of the imported package only its face or the
# modules listed. memory links notes to the index's file text; claims fence memory writes
# and keep their backlog under memory topics. The lists may only get shorter.
SIDEWAYS: dict[tuple[str, str], frozenset[str]] = {
    # (xref_records: the symbol record's codec, which a symbol link's digest reads)
    ("repocontext.memory", "repocontext.index"): frozenset(
        {"repocontext.index.files.nodes", "repocontext.index.projections.xref_records"}
    ),
    ("repocontext.claims", "repocontext.memory"): frozenset(
        {"repocontext.memory.fence", "repocontext.memory.service"}
    ),
}

# Adapters reach the domain through the facade and the package faces only: the workspace,
# errors, auth, settings, a package's __init__ or a top-level module; never a module inside
# a domain package.
ADAPTER_FACADE = {"repocontext.workspace", "repocontext.errors", "repocontext.auth"}

# Inside repocontext.index, concepts build on each other in this order (docs/indexing.md):
# a module imports its own part of the index or an earlier one, never a later one.
INDEX_PARTS = ("model", "parsing", "files", "links", "projections", "run", "")

# The 600-line cap: modules listed here may only shrink (the list may only get shorter).
SIZE_CAP = 600
SIZE_ALLOWLIST: dict[str, int] = {}


def modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            yield ".".join(parts), path


def imports_of(path, module):
    tree = ast.parse(path.read_text(), filename=str(path))
    package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            yield name
            for alias in node.names:
                yield f"{name}.{alias.name}"


def module_imports(path, module, known) -> Iterator[str]:
    """The modules of ``known`` that ``module`` imports, wherever the import statement is.

    Imports under ``if TYPE_CHECKING:`` and inside functions count: a cycle they hide is still
    a cycle between the concepts. ``from package import name`` is an import of the submodule
    ``package.name`` when there is one, else of the package's face (its ``__init__``).
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            for alias in node.names:
                if f"{name}.{alias.name}" in known:
                    yield f"{name}.{alias.name}"
                elif name in known:
                    yield name


def import_graph(prefix: str = "repocontext") -> dict[str, set[str]]:
    """Module -> the modules of ``prefix`` it imports (itself excluded)."""
    paths = {m: p for m, p in modules() if m == prefix or m.startswith(prefix + ".")}
    return {m: set(module_imports(p, m, paths)) - {m} for m, p in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def package_of(name):
    """The top-level package of ``repocontext`` a module belongs to (``repocontext.index``)."""
    return ".".join(name.split(".")[:2])


def layer_of(name):
    best = None
    for prefix in LAYERS:
        if (name == prefix or name.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best)
        ):
            best = prefix
    return best


def test_every_repocontext_module_belongs_to_a_layer():
    unplaced = [m for m, _ in modules() if m.startswith("repocontext") and layer_of(m) is None]
    assert unplaced == []


def test_imports_flow_one_way_and_adapters_never_import_each_other():
    violations = []
    for module, path in modules():
        if not module.startswith("repocontext"):
            continue
        mine = layer_of(module)
        for name in imports_of(path, module):
            theirs = layer_of(name) if name.startswith("repocontext") else None
            if theirs is None or theirs == "repocontext" or theirs == mine:
                continue
            if LAYERS[theirs] > LAYERS[mine]:
                violations.append(f"{module} imports higher layer {name}")
            if mine in ADAPTERS and theirs in ADAPTERS:
                violations.append(f"adapter {module} imports adapter {name}")
    assert violations == []


def test_no_modules_of_the_packages_import_each_other_in_a_cycle():
    """TYPE_CHECKING imports included: a cycle hidden from the interpreter is still a cycle."""
    for package in PACKAGES:
        assert cycles(import_graph(package)) == []


def test_the_cycle_finder_finds_a_cycle_hidden_under_type_checking(tmp_path):
    (tmp_path / "a.py").write_text("from b import B\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a import A\n"
    )
    (tmp_path / "c.py").write_text("import a\n")
    known = {"a": tmp_path / "a.py", "b": tmp_path / "b.py", "c": tmp_path / "c.py"}
    graph = {m: set(module_imports(p, m, known)) for m, p in known.items()}
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert cycles(graph) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_packages_of_one_layer_import_each_other_only_in_the_allowed_directions():
    violations = []
    graph = import_graph()
    for module, imported in graph.items():
        mine = package_of(module)
        for name in imported:
            theirs = package_of(name)
            if theirs == mine or LAYERS.get(theirs) != LAYERS.get(mine):
                continue
            if name != theirs and name not in SIDEWAYS.get((mine, theirs), ()):
                violations.append(f"{module} imports {name} sideways")
    assert violations == []
    used = {(package_of(m), package_of(n)): set() for m in graph for n in graph[m]}
    for module, imported in graph.items():
        for name in imported:
            used[package_of(module), package_of(name)].add(name)
    # (the allowance only shrinks: each listed module is still imported that way)
    assert {pair: names - used.get(pair, set()) for pair, names in SIDEWAYS.items()} == {
        pair: frozenset() for pair in SIDEWAYS
    }
    assert not {(b, a) for a, b in SIDEWAYS} & SIDEWAYS.keys()


def index_part(module):
    """The :data:`INDEX_PARTS` entry a module of ``repocontext.index`` belongs to."""
    part = module.removeprefix("repocontext.index").removeprefix(".").split(".")[0]
    return part if part in INDEX_PARTS else ""


def test_index_parts_import_only_their_own_or_earlier_parts():
    violations = []
    for module, imported in import_graph("repocontext.index").items():
        mine = INDEX_PARTS.index(index_part(module))
        violations += [
            f"{module} imports {name}"
            for name in imported
            if INDEX_PARTS.index(index_part(name)) > mine
        ]
    assert violations == []


def test_adapters_import_the_facade_and_package_faces_only():
    violations = []
    for module, imported in import_graph().items():
        mine = package_of(module)
        if mine not in ADAPTERS:
            continue
        violations += [
            f"{module} imports {name}"
            for name in imported
            if package_of(name) != mine and name not in ADAPTER_FACADE | {package_of(name)}
        ]
    assert violations == []


def test_domain_code_never_imports_protocol_or_cli_libraries():
    violations = []
    for module, path in modules():
        layer = layer_of(module)
        if layer is None or LAYERS[layer] > DOMAIN_LAYER_MAX:
            continue
        violations += [
            f"{module} imports {name}"
            for name in imports_of(path, module)
            if name.split(".")[0] in ADAPTER_LIBRARIES
        ]
    assert violations == []


def test_lmdb_is_imported_only_by_the_store_backend_module():
    users = {
        module
        for module, path in modules()
        for name in imports_of(path, module)
        if name.split(".")[0] == "lmdb"
    }
    assert users <= {"repocontext.store.lmdb_backend"}


def test_psycopg_is_imported_only_by_the_postgresql_backend_and_its_test_cluster():
    users = {
        module
        for module, path in modules()
        for name in imports_of(path, module)
        if name.split(".")[0] in ("psycopg", "psycopg_pool")
    }
    assert users == {
        "repocontext.store.postgres_backend",
        "repocontext.store._pg_schema",
        "repocontext.testing_pg",
    }


def imported_modules(path, module):
    """``(module imported, names taken from it)`` for each import statement of a module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            yield name, tuple(alias.name for alias in node.names)


def private_repocontext_imports(path, module):
    """The imports of a module naming more than ``repocontext.<face>`` or an ``_`` name."""
    for imported, names in imported_modules(path, module):
        parts = imported.split(".")
        if parts[0] != "repocontext":
            continue
        if len(parts) > 2 or any(n.startswith("_") for n in (*parts, *names)):
            yield imported


def test_lattice_runtime_uses_only_public_repocontext_names():
    """lattice_runtime imports ``repocontext`` or ``repocontext.<face>``, public names only."""
    violations = [
        f"{module} imports {imported}"
        for module, path in modules()
        if module.startswith("lattice_runtime")
        for imported in private_repocontext_imports(path, module)
    ]
    assert violations == []


def test_the_lattice_import_rule_catches_deep_private_and_underscored_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import repocontext.index.service\n"
        "from repocontext.pack.page import Page\n"
        "from repocontext._private import x\n"
        "from repocontext.search import _terms\n"
        "from repocontext.workspace import Workspace\n"
        "from repocontext import errors\n"
        "import repocontext\n"
        "import pathspec._meta\n"
    )
    assert list(private_repocontext_imports(sample, "lattice_runtime.sample")) == [
        "repocontext.index.service",
        "repocontext.pack.page",
        "repocontext._private",
        "repocontext.search",
    ]


def test_modules_stay_under_the_size_cap_and_the_allowlist_only_shrinks():
    too_big = []
    for module, path in modules():
        lines = len(path.read_text().splitlines())
        allowed = SIZE_ALLOWLIST.get(module, SIZE_CAP)
        if lines > allowed:
            too_big.append(f"{module}: {lines} lines > {allowed}")
    assert too_big == []
    assert all(limit > SIZE_CAP for limit in SIZE_ALLOWLIST.values())


def test_every_package_has_an_error_root():
    from lattice_runtime.errors import LatticeError
    from repocontext.errors import RepoContextError

    assert RepoContextError.code == "repocontext.error"
    assert LatticeError.code == "lattice.error"


def test_every_module_imports_on_its_own():
    """No import cycle hides behind an import order that happens to work."""
    import importlib
    import sys

    names = [m for m, _ in modules() if m.startswith("repocontext") and not m.endswith("__main__")]
    saved = {k: v for k, v in sys.modules.items() if k.startswith("repocontext")}
    failed = []
    try:
        for name in names:
            for loaded in [k for k in sys.modules if k.startswith("repocontext")]:
                del sys.modules[loaded]
            try:
                importlib.import_module(name)
            except ImportError as exc:
                failed.append(f"{name}: {exc}")
    finally:
        for loaded in [k for k in sys.modules if k.startswith("repocontext")]:
            del sys.modules[loaded]
        sys.modules.update(saved)
    assert failed == []
