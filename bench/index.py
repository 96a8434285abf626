"""Index benchmark: bare tree-sitter parse (the limit) vs. our bootstrap, reruns and drift.

Corpora: (a) the Python sources installed in .venv (thousands of real files) and (b) a
generated 10,000-file polyglot tree. Everything is measured in one run; ratios compare
figures of the same run. Run: ``.venv/bin/python bench/index.py [--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _docs import write_section  # noqa: E402

from repocontext.index.languages import language_for  # noqa: E402
from repocontext.index.walk import walk  # noqa: E402
from repocontext.settings import Settings  # noqa: E402
from repocontext.workspace import Workspace  # noqa: E402

SECTION = "## Index (`bench/index.py`)"

TEMPLATES = {
    "py": "import os\nfrom pkg{j} import mod{k}\n\n\nclass C{i}:\n    def m(self, x):\n        return x + {i}\n\n\ndef f{i}(a, b):\n    return a * b\n",
    "js": "import {{ f{k} }} from './m{k}.js';\nexport class C{i} {{ m(x) {{ return x + {i}; }} }}\nexport function f{i}(a) {{ return f{k}(a); }}\n",
    "ts": "import {{ f{k} }} from './m{k}';\nexport interface I{i} {{ x: number }}\nexport function f{i}(a: number): number {{ return f{k}(a); }}\n",
    "go": 'package p{j}\n\nimport "fmt"\n\ntype T{i} struct {{ X int }}\n\nfunc (t T{i}) M() int {{ return t.X }}\n\nfunc F{i}() {{ fmt.Println({i}) }}\n',
    "rs": "use std::fmt;\n\npub struct S{i} {{ x: i32 }}\n\nimpl S{i} {{\n    pub fn m(&self) -> i32 {{ self.x + {i} }}\n}}\n\npub fn f{i}() -> i32 {{ {i} }}\n",
    "java": "package p{j};\n\nimport java.util.List;\n\npublic class C{i} {{\n    public int m(int x) {{ return x + {i}; }}\n}}\n",
    "c": '#include "m{k}.h"\n#include <stdio.h>\n\nstruct s{i} {{ int x; }};\n\nint f{i}(int a) {{ return a + {i}; }}\n',
    "cpp": '#include "m{k}.hpp"\n\nnamespace n{j} {{\nclass C{i} {{\n public:\n  int m(int x) {{ return x + {i}; }}\n}};\n}}\n',
    "cs": "using System;\n\nnamespace N{j} {{\n    public class C{i} {{\n        public int M(int x) {{ return x + {i}; }}\n    }}\n}}\n",
    "rb": "require_relative 'm{k}'\n\nmodule M{j}\n  class C{i}\n    def m(x)\n      x + {i}\n    end\n  end\nend\n",
}


def generate(root: Path, count: int, exts: list[str]) -> None:
    rng = random.Random(11)
    for i in range(count):
        ext = exts[i % len(exts)]
        j, k = i % 50, rng.randrange(count)
        directory = root / f"d{j}"
        directory.mkdir(parents=True, exist_ok=True)
        stem = f"mod{i}" if ext == "py" else f"m{i}"
        (directory / f"{stem}.{ext}").write_text(TEMPLATES[ext].format(i=i, j=j, k=k))
    for j in range(50):
        (root / f"d{j}" / "__init__.py").write_text("")


def _bare_parse(paths: list[str]) -> int:
    import importlib

    import tree_sitter

    from repocontext.index.parser import _GRAMMARS  # the same grammar wheels the indexer uses

    parsers: dict[str, tree_sitter.Parser] = {}
    total = 0
    for path in paths:
        language = language_for(path)
        if language is None:
            continue
        if language not in parsers:
            module, function = _GRAMMARS[language]
            grammar = tree_sitter.Language(getattr(importlib.import_module(module), function)())
            parsers[language] = tree_sitter.Parser(grammar)
        data = Path(path).read_bytes()
        parsers[language].parse(data)
        total += len(data)
    return total


def bare_parse_limit(root: Path) -> tuple[float, int, int]:
    files = [str(root / e.path) for e in walk(root).entries if language_for(e.path)]
    chunks = [files[i : i + 64] for i in range(0, len(files), 64)]
    start = time.perf_counter()
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        total = sum(pool.map(_bare_parse, chunks))
    elapsed = time.perf_counter() - start
    return total / elapsed / 1e6, len(files), total


def cold_in_process(data: Path, root: Path, repo_id: str) -> tuple[float, dict, float]:  # type: ignore[type-arg]
    """The cold bootstrap as a user runs it (`repocontext index`), in its own process.

    Returns its wall time (process start included), its status and the peak RSS of that
    process and its parser workers (mapped store pages included).
    """
    cli = Path(sys.executable).parent / "repocontext"
    env = {**os.environ, "REPOCONTEXT_EMBEDDER": "off", "REPOCONTEXT_RECONCILE": "off"}
    args = [str(cli), "index", str(root), "--repo-id", repo_id, "--data-dir", str(data), "--json"]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out_file:
        child = subprocess.Popen(args, stdout=out_file, env=env)
        # wait4 gives the usage of this child and its workers only (RUSAGE_CHILDREN would
        # also count forks of this big benchmark process, such as git calls).
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0
        elapsed = time.perf_counter() - start
        out_file.seek(0)
        out = out_file.read()
    peak = usage.ru_maxrss / 1024
    return elapsed, json.loads(out), peak


def index_once(data: Path, root: Path, repo_id: str) -> tuple[float, object]:
    settings = Settings(data_dir=data, workspace_root=root.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        start = time.perf_counter()
        status = workspace.bootstrap(root, repo_id, background=False)
        return time.perf_counter() - start, status


def changed_once(data: Path, root: Path, repo_id: str) -> float:
    settings = Settings(data_dir=data, workspace_root=root.parent, embedder="off")
    with Workspace.open(settings) as workspace:
        start = time.perf_counter()
        workspace.index.changed(repo_id)
        return time.perf_counter() - start


def serving_latency(data: Path, root: Path, repo_id: str, edit: Path) -> dict[str, float]:
    """One-file change in a serving process: a scoped refresh, and watch event to index."""
    settings = Settings(
        data_dir=data,
        workspace_root=root.parent,
        reconcile="watch",
        reconcile_interval_seconds=3600,
    )
    rel = edit.relative_to(root).as_posix()
    with Workspace.open(settings) as workspace:
        start = time.perf_counter()
        workspace.index.warm(repo_id)
        warm_s = time.perf_counter() - start
        refresh = []
        for i in range(7):
            edit.write_text(edit.read_text() + f"\ndef refreshed_{i}():\n    pass\n")
            start = time.perf_counter()
            workspace.index.refresh(repo_id, [rel])
            refresh.append(time.perf_counter() - start)
        workspace.start_background()
        assert workspace.reconciler is not None
        workspace.reconciler.watching.wait(120)  # watcher running, catch-up pass done
        watched = []
        for i in range(7):
            name = f"watched_{i}"
            edit.write_text(edit.read_text() + f"\ndef {name}():\n    pass\n")
            start = time.perf_counter()
            while name not in {s["name"] for s in workspace.index.outline(repo_id, rel).symbols}:
                time.sleep(0.002)
                if time.perf_counter() - start > 30:
                    raise RuntimeError("the watcher never reflected the edit")
            watched.append(time.perf_counter() - start)
            time.sleep(0.2)
    return {
        "warm_s": warm_s,
        "refresh_ms": statistics.median(refresh) * 1000,
        "watch_ms": statistics.median(watched) * 1000,
    }


def measure(name: str, root: Path, work: Path, edit: Path) -> dict[str, float | str]:
    limit_mbs, parse_files, parse_bytes = bare_parse_limit(root)
    data = work / f"data-{name}"
    cold_s, status, cold_rss = cold_in_process(data, root, name)
    counters = status["counters"]
    files = int(counters["filesSeen"])
    size = sum(e.size for e in walk(root).entries) / 1e6
    nochange_s, _ = index_once(data, root, name)
    edit.write_text(edit.read_text() + "\n# edited\n")
    onefile_s, _ = index_once(data, root, name)
    edit.write_text(edit.read_text() + "\n# edited again\n")
    changed_s = changed_once(data, root, name)
    serving = serving_latency(data, root, name, edit)
    return {
        **serving,
        "corpus": name,
        "files": files,
        "mb": size,
        "limit_mbs": limit_mbs,
        "cold_s": cold_s,
        "cold_files_s": files / cold_s,
        "cold_mbs": size / cold_s,
        "ratio": (size / cold_s) / limit_mbs,
        "nochange_s": nochange_s,
        "onefile_s": onefile_s,
        "changed_s": changed_s,
        "cold_rss_mb": cold_rss,
        "parse_files": parse_files,
        "parse_mb": parse_bytes / 1e6,
    }


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def render(rows: list[dict[str, float | str]], rss: float) -> str:
    lines = [
        SECTION,
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. No embeddings. Reproduce: `.venv/bin/python bench/index.py --write-docs`.",
        "The limit is a bare tree-sitter parse (no queries, no store) of the same files with two "
        "worker processes.",
        "",
        "| corpus | files | MB | limit MB/s | cold s | cold files/s | cold MB/s | cold/limit | no-change rerun s | one-file rerun s | changed s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    serving = [
        "",
        "One-file change while serving (median of 7 edits of one file): `refresh` is the scoped "
        "re-index the reconcile loop runs for a batch of file events; `watch` is from the write "
        "until `outline` shows the new symbol, through the real watcher (50 ms debounce). "
        "`warm` loads the projection state from the stored file nodes once, before the first "
        "change (the reconcile loop does it when it starts).",
        "",
        "| corpus | warm s | one-file refresh ms | one-file watch-to-index ms |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['files']:,} | {r['mb']:.1f} | {r['limit_mbs']:.2f} | {r['cold_s']:.1f} "
            f"| {r['cold_files_s']:.0f} | {r['cold_mbs']:.2f} | {r['ratio']:.2f} | {r['nochange_s']:.2f} "
            f"| {r['onefile_s']:.2f} | {r['changed_s']:.2f} |"
        )
        serving.append(
            f"| {r['corpus']} | {r['warm_s']:.2f} | {r['refresh_ms']:.0f} | {r['watch_ms']:.0f} |"
        )
    lines += serving
    cold_rss = ", ".join(f"{r['corpus']} {r['cold_rss_mb']:.0f} MB" for r in rows)
    lines += [
        "",
        f"Peak RSS of the cold `repocontext index` process or one of its parser workers (mapped "
        f"LMDB pages included): {cold_rss}. Peak RSS of the benchmark process itself (it also "
        f"holds the warm projection state for the serving measurements): {rss:.0f} MB.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generated", type=int, default=10_000)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rc-index-bench-"))
    rows = []
    try:
        venv_src = work / "ws" / "site-packages"
        site = (
            Path(sys.prefix)
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
        )
        shutil.copytree(
            site,
            venv_src,
            ignore=shutil.ignore_patterns("*.so", "*.pyc", "__pycache__", "*.dist-info"),
        )
        edit = next(p for p in sorted(venv_src.rglob("*.py")) if p.stat().st_size > 1000)
        rows.append(measure("venv-site-packages", venv_src, work, edit))
        gen = work / "ws" / "polyglot"
        generate(gen, args.generated, list(TEMPLATES))
        subprocess.run(["git", "init", "-q", str(gen)], check=True)
        rows.append(measure("generated-polyglot", gen, work, gen / "d0" / "mod0.py"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    section = render(rows, peak_rss_mb())
    print(section)
    if args.write_docs:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
