"""Incremental projections equal a from-scratch computation after every change.

The oracle below computes every record the simple way — all links of the repository at once
with :func:`link_repository`, :func:`dependents` and :func:`covering_tests` — and shares only
the record formatting with the incremental :class:`ProjectionState`. Nodes come from the real
extraction pipeline (real files, real tree-sitter), and random edit sequences add, change and
delete files so that names gain and lose definers, imports start and stop resolving, Java
packages and the Go module move, and tests come and go.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from repocontext.index.files.extract import extract_file
from repocontext.index.files.nodes import file_node, iter_symbols, outline_of
from repocontext.index.files.walk import WalkEntry
from repocontext.index.links.coverage import covering_tests
from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.links.resolve import dependents, link_repository
from repocontext.index.parsing.manifests import MANIFESTS
from repocontext.index.projections.projection import (
    ProjectionState,
    in_record,
    name_record,
    out_record,
    record_digest,
)
from repocontext.index.projections.projection_writer import (
    ProjectionWriter,
    apply_delta,
    rebuild_projections,
)
from repocontext.store import STRUCTURAL, SYMBOL, XREF, Store
from repocontext.store.keys import family_prefix, pkg_key, symbol_key, xref_key
from repocontext.testing import FakeClock

REPO = "r"
NAMES = ["parse", "Helper", "render", "Widget", "load_config", "compute", "shared"]


def oracle(nodes: dict[str, dict[str, Any]], go_module: str | None) -> dict[str, dict[str, Any]]:
    outlines = {p: o for p, n in nodes.items() if (o := outline_of(n)) is not None}
    paths = sorted(nodes)
    packages = {p: o.package for p, o in outlines.items()}
    packages.update((p, n.get("package")) for p, n in nodes.items() if p.endswith(MANIFESTS))
    links = link_repository(
        outlines, RepoFiles.build(paths, packages=packages, go_mod_module=go_module)
    )
    records: dict[str, dict[str, Any]] = {STRUCTURAL: {}, SYMBOL: {}, XREF: {}}
    forward: dict[str, list[Any]] = defaultdict(list)
    for link in links:
        forward[link.source].append(link)
    for path, found in forward.items():
        if (value := out_record(found)) is not None:
            records[XREF][xref_key(REPO, f"out:{path}")] = value
    reverse, tests = dependents(links), covering_tests(links, paths)
    for path in paths:
        if (value := in_record(reverse.get(path, []), tests.get(path, []))) is not None:
            records[XREF][xref_key(REPO, f"in:{path}")] = value
    defined = {s.name for o in outlines.values() for s in iter_symbols(o.symbols)}
    users: dict[str, list[str]] = defaultdict(list)
    for path in sorted(outlines):
        for name in defined.intersection(outlines[path].references):
            users[name].append(path)
    for name, found in users.items():
        records[XREF][xref_key(REPO, f"name:{name}")] = name_record(name, found)
    records[SYMBOL] = oracle_symbols(outlines)
    records[STRUCTURAL] = oracle_packages(nodes)
    return records


def oracle_symbols(outlines: dict[str, Any]) -> dict[str, Any]:
    records: dict[str, Any] = {}
    for path in sorted(outlines):
        for s in iter_symbols(outlines[path].symbols):
            record = records.setdefault(
                symbol_key(REPO, s.fq_name),
                {"fullyQualifiedName": s.fq_name, "name": s.name, "defs": []},
            )
            record["defs"].append(
                {
                    "path": path,
                    "kind": s.kind,
                    "signature": s.signature,
                    "startLine": s.start_line,
                    "endLine": s.end_line,
                }
            )
    return records


def oracle_packages(nodes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for path, node in nodes.items():
        directory = PurePosixPath(path).parent.as_posix()
        if directory != ".":
            counts[directory][node.get("language") or "other"] += 1
    return {
        pkg_key(REPO, directory): {
            "path": directory,
            "files": sum(per.values()),
            "languages": dict(sorted(per.items())),
        }
        for directory, per in counts.items()
    }


def source(rng: random.Random, path: str) -> str:
    a, b, c = rng.sample(NAMES, 3)
    other = rng.randrange(6)
    if path.endswith(".py"):
        return (
            f"import pkg{rng.randrange(3)}.m{other}\nfrom pkg{rng.randrange(3)} import m{other}\n\n"
            f"class {b.capitalize()}:\n    def {a}(self):\n        return {c}()\n\n\n"
            f"def {c}():\n    return {a}() + {rng.choice(NAMES)}() + x.{rng.choice(NAMES)}()\n"
        )
    if path.endswith("package.json"):  # (the JS files import its package by name)
        return f'{{"name": "webkit{rng.randrange(2)}"}}\n'
    if path.endswith(".js"):  # (a method named like a function elsewhere, used bare or not)
        return (
            f"import {{ {a} }} from './x{other}';\n"
            f"import {{ {b} }} from 'webkit{rng.randrange(2)}/x{rng.randrange(6)}';\n"
            f"export * from './x{rng.randrange(6)}';\n"  # (a barrel: its importers reach it)
            f"export function {b}() {{ return {a}() + {c}() + o.{rng.choice(NAMES)}(); }}\n"
            f"export class K{other} {{ {rng.choice(NAMES)}() {{}} }}\n"
        )
    if path.endswith(".java"):
        return (
            f"package p{rng.randrange(2)};\n\nimport p{rng.randrange(2)}.C{other};\n\n"
            f"public class C{path[-6]} {{\n    public int {a}() {{ return {b}(); }}\n}}\n"
        )
    module = f"example.com/m{rng.randrange(2)}/g"
    return f'package g\n\nimport "{module}"\n\nfunc {b.capitalize()}() {{ {a}() }}\n'


def candidate_paths() -> list[str]:
    paths = [f"pkg{i}/m{j}.py" for i in range(3) for j in range(6)]
    paths += [f"pkg{i}/__init__.py" for i in range(3)]
    paths += ["pkg0/m0/__init__.py", "pkg1/m1/__init__.py"]  # twins: pkg0.m0.* defined twice
    paths += [f"tests/test_m{j}.py" for j in range(6)]
    paths += [f"web/x{j}.js" for j in range(6)] + [f"web/x{j}.test.js" for j in range(3)]
    paths += ["web/package.json"]
    paths += [f"src/C{j}.java" for j in range(4)] + [f"g/f{j}.go" for j in range(3)]
    return paths


class Repo:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.nodes: dict[str, dict[str, Any]] = {}

    def write(self, path: str) -> dict[str, Any]:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        package = path.endswith("__init__.py") and path.count("/") == 1
        text = "" if package else source(self.rng, path)
        full.write_text(text)
        info = full.stat()
        item = extract_file(
            str(self.root), WalkEntry(path, info.st_size, info.st_mtime_ns, info.st_ino, False)
        )
        node = file_node(item, None)
        self.nodes[path] = node
        return node

    def step(self) -> dict[str, dict[str, Any] | None]:
        changes: dict[str, dict[str, Any] | None] = {}
        for _ in range(self.rng.randint(1, 4)):
            path = self.rng.choice(candidate_paths())
            if path in self.nodes and self.rng.random() < 0.3:
                (self.root / path).unlink()
                del self.nodes[path]
                changes[path] = None
            else:
                changes[path] = self.write(path)
        return changes


@pytest.mark.parametrize("lean", [False, True], ids=["definitions-held", "definitions-read"])
@pytest.mark.parametrize("seed", range(12))
def test_incremental_updates_equal_a_full_recompute(tmp_path: Path, seed: int, lean: bool) -> None:
    rng = random.Random(seed)
    repo = Repo(tmp_path, rng)
    for path in rng.sample(candidate_paths(), 20):
        repo.write(path)
    go_module = "example.com/m0"
    state = ProjectionState.build(REPO, repo.nodes.values(), go_module)
    assert state.records == digests(oracle(repo.nodes, go_module))
    if lean:  # from now on a twin's definitions come from its node, as written
        state.release_definitions(repo.nodes.get)
    for step in range(15):
        if rng.random() < 0.15:
            go_module = f"example.com/m{rng.randrange(2)}"
        changes = repo.step()
        delta = state.update(changes, go_module)
        assert not (lean and state._definitions), "a lean state holds no emitted definitions"
        want = oracle(repo.nodes, go_module)
        assert state.records == digests(want), f"seed {seed} step {step}"
        for tree, changed in delta.items():
            for key, value in changed.items():
                assert want[tree].get(key) == value, f"seed {seed} step {step} {key}"


def test_a_delta_applied_to_the_store_matches_a_full_write(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data", clock=FakeClock()) as store:
        check_store_delta(tmp_path / "repo", store)


def check_store_delta(tmp_path: Path, store: Store) -> None:
    rng = random.Random(99)
    repo = Repo(tmp_path, rng)
    for path in rng.sample(candidate_paths(), 25):
        repo.write(path)
    state = staged(repo.nodes.values())
    first = rebuild_projections(store, REPO, state, None)
    assert first.written > 0 and first.deleted == 0
    for _ in range(10):
        apply_delta(store, state.update(repo.step(), None))
    stored = {
        tree: {r.key: r.value for r in store.iter_records(tree, family_prefix(REPO, family))}
        for tree, family in ((STRUCTURAL, "pkg"), (SYMBOL, "symbol"), (XREF, "xref"))
    }
    assert stored == oracle(repo.nodes, None)
    again = rebuild_projections(store, REPO, staged(repo.nodes.values()), None)
    assert (again.written, again.deleted) == (0, 0)
    # A rebuild over a store with stale and foreign records rewrites and deletes them.
    some_key = next(iter(stored[XREF]))
    with store.batch() as batch:
        batch.put(XREF, some_key, {"stale": True})
        batch.put(XREF, xref_key(REPO, "name:NoSuchName"), {"name": "NoSuchName"})
    fixed = rebuild_projections(store, REPO, staged(repo.nodes.values()), None)
    assert (fixed.written, fixed.deleted) == (1, 1)
    assert store.get(XREF, some_key).value == stored[XREF][some_key]


def test_records_flushed_while_staging_end_as_one_build(tmp_path: Path) -> None:
    rng = random.Random(5)
    repo = Repo(tmp_path / "repo", rng)
    for path in rng.sample(candidate_paths(), 25):
        repo.write(path)
    for path in ("dup/mod.py", "dup/mod/__init__.py"):  # both define dup.mod.Shared
        repo.nodes[path] = written_node(repo.root, path, "class Shared:\n    pass\n")
    whole = staged(repo.nodes.values())
    with Store.open(tmp_path / "data", clock=FakeClock()) as store:
        stale = symbol_key(REPO, "gone.Name")
        with store.batch() as batch:
            batch.put(SYMBOL, stale, {"fullyQualifiedName": "gone.Name"})
        state = ProjectionState(REPO)
        writer = ProjectionWriter(store, REPO)
        for node in repo.nodes.values():  # "dup/mod.py" is flushed before its twin comes
            state.stage(node["path"], node)
            if node["path"] == "dup/mod.py" or rng.random() < 0.3:
                state.flush_local(writer)
        rebuild_projections(store, REPO, state, None, writer)
        whole.commit(None)
        stored = {
            tree: {r.key: r.value for r in store.iter_records(tree, family_prefix(REPO, fam))}
            for tree, fam in ((STRUCTURAL, "pkg"), (SYMBOL, "symbol"), (XREF, "xref"))
        }
        assert stored == oracle(repo.nodes, None)
        assert len(stored[SYMBOL][symbol_key(REPO, "dup.mod.Shared")]["defs"]) == 2
        assert store.get(SYMBOL, stale) is None
        assert state.records == whole.records


def test_renaming_a_package_reresolves_the_imports_of_it(tmp_path: Path) -> None:
    node = partial(written_node, tmp_path)

    nodes = {
        "kit/package.json": node("kit/package.json", '{"name": "kit"}'),
        "kit/src/button.ts": node("kit/src/button.ts", "export const button = 1;\n"),
        "app/main.ts": node("app/main.ts", "import { button } from 'kit/button';\n"),
    }
    assert nodes["kit/package.json"]["package"] == "kit"
    state = ProjectionState.build(REPO, nodes.values(), None)
    assert state.records == digests(oracle(nodes, None))
    out = xref_key(REPO, "out:app/main.ts")
    assert out in state.records[XREF]
    nodes["kit/package.json"] = node("kit/package.json", '{"name": "@acme/kit"}')
    delta = state.update({"kit/package.json": nodes["kit/package.json"]}, None)
    assert delta[XREF][out] is None  # `kit/button` names no package of the repository now
    assert state.records == digests(oracle(nodes, None))


def test_a_barrel_reaches_the_names_it_reexports_and_its_importers_follow_a_change(
    tmp_path: Path,
) -> None:
    node = partial(written_node, tmp_path)

    nodes = {
        "lib/a.ts": node("lib/a.ts", "export function render() {}\n"),
        "lib/b.ts": node("lib/b.ts", "export function render() {}\n"),
        "lib/mid.ts": node("lib/mid.ts", "export * from './a';\n"),
        "index.ts": node("index.ts", "export * from './lib/mid';\n"),
        "app.ts": node("app.ts", "import { setup } from './index';\nrender();\n"),
    }
    state = ProjectionState.build(REPO, nodes.values(), None)
    want = oracle(nodes, None)
    assert state.records == digests(want)
    out = xref_key(REPO, "out:app.ts")
    assert [r["path"] for r in want[XREF][out]["references"]] == ["lib/a.ts"]  # (through two)
    nodes["lib/mid.ts"] = node("lib/mid.ts", "export * from './b';\n")  # app.ts unchanged
    delta = state.update({"lib/mid.ts": nodes["lib/mid.ts"]}, None)
    assert [r["path"] for r in delta[XREF][out]["references"]] == ["lib/b.ts"]
    assert state.records == digests(oracle(nodes, None))


def written_node(root: Path, path: str, text: str) -> dict[str, Any]:
    """Write ``text`` at ``path`` under ``root`` and return its node, extracted for real."""
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)
    info = (root / path).stat()
    entry = WalkEntry(path, info.st_size, info.st_mtime_ns, info.st_ino, False)
    return file_node(extract_file(str(root), entry), None)


def staged(nodes):
    state = ProjectionState(REPO)
    for node in nodes:
        state.stage(node["path"], node)
    return state


def digests(records):
    return {
        tree: {k: record_digest(v) for k, v in values.items()} for tree, values in records.items()
    }
