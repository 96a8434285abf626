"""Architecture rules from HOUSE_STYLE.md: import layering and the module-size cap."""

import ast
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
    "repocontext.search": 3,
    "repocontext.pack": 4,
    "repocontext.settings": 5,
    "repocontext.workspace": 5,
    "repocontext.entries": 5,
    "repocontext.telemetry": 5,
    "repocontext.wire": 5,
    "repocontext.mcp": 6,
    "repocontext.http": 6,
    "repocontext.server": 7,
    "repocontext.cli": 8,
    "repocontext.__main__": 9,
    "repocontext": 9,
}
ADAPTERS = {"repocontext.mcp", "repocontext.http", "repocontext.cli"}
ADAPTER_LIBRARIES = {"mcp", "fastapi", "starlette", "uvicorn", "typer", "click", "rich", "httpx"}
DOMAIN_LAYER_MAX = 5

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


def test_lattice_runtime_uses_only_public_repocontext_names():
    violations = []
    for module, path in modules():
        if not module.startswith("lattice_runtime"):
            continue
        for name in imports_of(path, module):
            parts = name.split(".")
            if parts[0] != "repocontext":
                continue
            if len(parts) > 3 or any(p.startswith("_") for p in parts):
                violations.append(f"{module} imports {name}")
    assert violations == []


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
