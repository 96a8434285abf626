"""Generated benchmark corpora: polyglot trees of small or source-sized files.

Used by ``bench/index.py``, ``bench/search.py`` and ``bench/load.py``.
"""

from __future__ import annotations

import random
from pathlib import Path

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


# One more definition of realistic size per language, repeated to make files of source-like
# size (the median source file of a real repository is a few KB; the one-liners above are
# ~120 bytes and measure per-file overhead rather than parsing).
UNITS = {
    "py": '\n\nclass Handler{i}x{u}(Base):\n    """Handle request kind {u} of module {i}."""\n\n    def __init__(self, registry, limit={u}):\n        self.registry = registry\n        self.limit = limit\n\n    def handle(self, request):\n        items = [x for x in request.items if x.size < self.limit]\n        if not items:\n            return None\n        return self.registry.lookup(items[0].name, default=mod{k}.f{k})\n\n\ndef process_{u}(values, scale=2):\n    total = 0\n    for value in values:\n        total += value * scale\n    return total\n',
    "js": "\nexport class Handler{u} {{\n  constructor(registry) {{\n    this.registry = registry;\n    this.limit = {u};\n  }}\n  handle(request) {{\n    const items = request.items.filter((x) => x.size < this.limit);\n    return items.length ? this.registry.lookup(items[0].name) : f{k}(null);\n  }}\n}}\n\nexport function process{u}(values, scale = 2) {{\n  let total = 0;\n  for (const value of values) total += value * scale;\n  return total;\n}}\n",
    "ts": "\nexport class Handler{u} implements I{i} {{\n  x = {u};\n  constructor(private readonly registry: Map<string, number>) {{}}\n  handle(names: string[]): number {{\n    const found = names.filter((n) => this.registry.has(n));\n    return found.length ? this.registry.get(found[0]) ?? 0 : f{k}(this.x);\n  }}\n}}\n\nexport function process{u}(values: number[], scale = 2): number {{\n  return values.reduce((total, value) => total + value * scale, 0);\n}}\n",
    "go": "\n// Handler{u} handles request kind {u}.\ntype Handler{u} struct {{\n\tLimit    int\n\tRegistry map[string]int\n}}\n\nfunc (h *Handler{u}) Handle(names []string) int {{\n\ttotal := 0\n\tfor _, name := range names {{\n\t\tif v, ok := h.Registry[name]; ok && v < h.Limit {{\n\t\t\ttotal += v\n\t\t}}\n\t}}\n\treturn total\n}}\n\nfunc Process{u}(values []int, scale int) int {{\n\tfmt.Println(len(values))\n\treturn len(values) * scale\n}}\n",
    "rs": "\n/// Handles request kind {u}.\npub struct Handler{u} {{\n    limit: usize,\n    names: Vec<String>,\n}}\n\nimpl Handler{u} {{\n    pub fn new(limit: usize) -> Self {{\n        Self {{ limit, names: Vec::new() }}\n    }}\n\n    pub fn handle(&self, request: &[String]) -> usize {{\n        request.iter().filter(|n| n.len() < self.limit).count() + self.names.len()\n    }}\n}}\n\npub fn process_{u}(values: &[i64], scale: i64) -> i64 {{\n    values.iter().map(|v| v * scale).sum()\n}}\n",
    "java": "\n    /** Handles request kind {u}. */\n    public static final class Handler{u} {{\n        private final java.util.Map<String, Integer> registry;\n        private final int limit = {u};\n\n        public Handler{u}(java.util.Map<String, Integer> registry) {{\n            this.registry = registry;\n        }}\n\n        public int handle(List<String> names) {{\n            int total = 0;\n            for (String name : names) {{\n                total += registry.getOrDefault(name, limit);\n            }}\n            return total;\n        }}\n    }}\n",
    "c": "\n/* Handles request kind {u}. */\nstruct handler_{u} {{\n    int limit;\n    const char **names;\n}};\n\nint handler_{u}_handle(const struct handler_{u} *h, const char **names, int n) {{\n    int total = 0;\n    for (int i = 0; i < n; i++) {{\n        if (names[i] && h->limit > i) {{\n            total += i;\n        }}\n    }}\n    return total + f{k}(n);\n}}\n",
    "cpp": "\nnamespace h{u} {{\n/// Handles request kind {u}.\nclass Handler {{\n public:\n  explicit Handler(int limit) : limit_(limit) {{}}\n  int handle(const std::vector<std::string>& names) const {{\n    int total = 0;\n    for (const auto& name : names) {{\n      if (static_cast<int>(name.size()) < limit_) total += 1;\n    }}\n    return total;\n  }}\n\n private:\n  int limit_;\n}};\n}}  // namespace h{u}\n",
    "cs": "\n    /// <summary>Handles request kind {u}.</summary>\n    public sealed class Handler{u}\n    {{\n        private readonly int _limit = {u};\n\n        public int Handle(string[] names)\n        {{\n            var total = 0;\n            foreach (var name in names)\n            {{\n                if (name.Length < _limit) total += name.Length;\n            }}\n            return total;\n        }}\n\n        public static int Process(int[] values, int scale) => values.Length * scale;\n    }}\n",
    "rb": "\n  # Handles request kind {u}.\n  class Handler{u}\n    def initialize(registry, limit = {u})\n      @registry = registry\n      @limit = limit\n    end\n\n    def handle(request)\n      items = request.items.select {{ |x| x.size < @limit }}\n      return nil if items.empty?\n\n      @registry.lookup(items.first.name)\n    end\n  end\n",
}
# Where the units go: appended, or before this closing text of the file's template.
_CLOSERS = {"java": "}\n", "cpp": "}\n", "cs": "    }\n}\n", "rb": "  end\nend\n"}


def generate(root: Path, count: int, exts: list[str], units: tuple[int, int] | None = None) -> None:
    """Write ``count`` files cycling through ``exts``.

    ``units``: how many extra realistic definitions per file (a random number in the range);
    ``None`` keeps the one-line-per-definition files of ~120 bytes.
    """
    rng = random.Random(11)
    for i in range(count):
        ext = exts[i % len(exts)]
        j, k = i % 50, rng.randrange(count)
        directory = root / f"d{j}"
        directory.mkdir(parents=True, exist_ok=True)
        stem = f"mod{i}" if ext == "py" else f"m{i}"
        text = TEMPLATES[ext].format(i=i, j=j, k=k)
        if units is not None:
            body = "".join(UNITS[ext].format(i=i, k=k, u=u) for u in range(rng.randint(*units)))
            closer = _CLOSERS.get(ext)
            if closer and text.endswith(closer):
                text = text[: -len(closer)] + body + closer
            else:
                text += body
        (directory / f"{stem}.{ext}").write_text(text)
    for j in range(50):
        (root / f"d{j}" / "__init__.py").write_text("")
