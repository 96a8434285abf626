"""The timed steps of the index benchmark between the bare-parse limit and the cold run.

The bare tree-sitter parse (the limit), the parse plus the outline query, the whole outline
step, the extraction alone, and the per-step CPU costs of one parser worker.
"""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from multiprocessing import get_context
from pathlib import Path

from repocontext.index.files.extract import CHUNK, extract_many, worker_started
from repocontext.index.files.walk import walk
from repocontext.index.parsing.languages import content_language, language_for

STAGES = ("parse", "outline query", "outline")


def _parse_stage(stage: str, paths: list[str]) -> int:
    """Run the first steps of the per-file work over ``paths``; return the bytes read.

    ``parse`` is the limit: a bare tree-sitter parse. ``outline query`` adds running the
    outline query over the tree (its matches consumed, nothing built), as the indexer runs
    it; ``outline`` is the indexer's whole outline step (query, symbols, imports and the
    lexed references) without reading stat, blob id, token count or storing.
    """
    import importlib

    import tree_sitter

    # the same grammar wheels and queries the indexer uses
    from repocontext.index.parsing import parser as ts

    parsers: dict[str, tree_sitter.Parser] = {}
    total = 0
    for path in paths:
        if language_for(path) is None:
            continue
        data = Path(path).read_bytes()
        language = content_language(path, data)  # the grammar the indexer picks (.h: C or C++)
        assert language is not None
        if stage == "outline":
            ts.parse_outline(language, data, path)
        elif stage == "outline query":
            source = ts._without_class_macros(data) if language == "cpp" else data
            tree = ts._parser(language).parse(source)
            matches = tree_sitter.QueryCursor(ts._grammar(language).outline)
            for _ in matches.matches(tree.root_node, ts._predicate):
                pass
        else:
            if language not in parsers:
                module, function = ts._GRAMMARS[language]
                grammar = tree_sitter.Language(getattr(importlib.import_module(module), function)())
                parsers[language] = tree_sitter.Parser(grammar)
            parsers[language].parse(data)
        total += len(data)
    return total


def bare_parse_limit(root: Path, stage: str = "parse") -> tuple[float, int, int, float]:
    """The limit's MB/s, parsed files and bytes, and the CPU seconds of its two workers.

    ``stage``: one of :data:`STAGES`, run the same way (the limit is ``parse``).
    """
    files = [str(root / e.path) for e in walk(root).entries if language_for(e.path)]
    chunks = [files[i : i + 64] for i in range(0, len(files), 64)]
    cpu_before = children_cpu_s()
    start = time.perf_counter()
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        total = sum(pool.map(partial(_parse_stage, stage), chunks))
    elapsed = time.perf_counter() - start
    return total / elapsed / 1e6, len(files), total, children_cpu_s() - cpu_before


def extract_only(root: Path) -> tuple[float, float]:
    """The per-file work alone: wall and CPU seconds of the job's worker function over every
    file, with two parser processes as the job starts them, results sent back and dropped.

    What the cold bootstrap would take if its main process (file nodes, content, projections,
    the store) cost nothing: the ceiling of ``cold/limit`` for this design.
    """
    entries = walk(root).entries
    chunks = [entries[i : i + CHUNK] for i in range(0, len(entries), CHUNK)]
    cpu_before = children_cpu_s()
    start = time.perf_counter()
    context = get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context, initializer=worker_started) as pool:
        work = partial(extract_many, str(root), skip_binary=True)
        received = sum(len(chunk) for chunk in pool.map(work, chunks))  # unpickled, dropped
    elapsed = time.perf_counter() - start
    if received != len(entries):
        raise RuntimeError(f"extract only: {received} results for {len(entries)} files")
    return elapsed, children_cpu_s() - cpu_before


def children_cpu_s() -> float:
    """User + system CPU seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def phase_costs(root: str, sample: int, rounds: int = 3) -> dict[str, float]:
    """CPU seconds of each step of the per-file work, in one process, over a sample of files.

    Run in a spawned process (a clean interpreter, as a parser worker is). ``extract`` is the
    whole per-file function the workers run; the steps before it are its main parts. Each
    step runs ``rounds`` times, interleaved with the others, and its cheapest run counts.
    """
    import pickle

    from tree_sitter import QueryCursor

    from repocontext.index.files.extract import extract_file
    from repocontext.index.parsing import parser as ts
    from repocontext.index.parsing._lexer import identifiers
    from repocontext.tokens import count_tokens

    entries = [e for e in walk(Path(root)).entries if language_for(e.path) and not e.oversized]
    random.Random(5).shuffle(entries)
    entries = entries[:sample]
    read = [(e, (Path(root) / e.path).read_bytes()) for e in entries]
    files = [(e, str(content_language(e.path, data)), data) for e, data in read]
    for _, language, _ in files:
        ts._parser(language)  # grammars and queries loaded before timing
    trees = [(ts._parser(language).parse(data), language) for _, language, data in files]
    texts = [data.decode("utf-8", "replace") for _, _, data in files]

    results: list[object] = []
    steps: dict[str, Callable[[], object]] = {
        "parse": lambda: [ts._parser(lang).parse(data) for _, lang, data in files],
        "outline query": lambda: [
            list(QueryCursor(ts._grammar(lang).outline).matches(tree.root_node))
            for tree, lang in trees
        ],
        "lexing (references)": lambda: [identifiers(d, lang) for _, lang, d in files],
        "token count": lambda: [count_tokens(text) for text in texts],
        "extract (all of it)": lambda: results.extend(extract_file(root, e) for e, _, _ in files),
        "pickle to the main process": lambda: pickle.loads(pickle.dumps(results)),
    }
    costs = {"files": float(len(files)), "mb": sum(len(d) for _, _, d in files) / 1e6}
    for _ in range(rounds):  # interleaved rounds, the cheapest of each step counts
        results.clear()
        for name, step in steps.items():
            start = time.process_time()
            step()
            costs[name] = min(costs.get(name, float("inf")), time.process_time() - start)
    return costs
