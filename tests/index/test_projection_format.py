"""A change to what the projection records hold must come with a new PROJECTION_FORMAT.

A process adopts stored projections stamped with the current format without recomputing
them (docs/indexing.md, *Adopting*). If the records' computation changed but the format did
not, a store written by the old code would be trusted and stay wrong. This test pins the
records of a fixed set of outlines (hand-written, so grammar upgrades do not move it) to a
digest recorded per format: a change that alters them fails here until the format is
bumped and the digest recorded. (A change these outlines do not exercise is not caught.)
"""

import hashlib

from repocontext.index.model import FileOutline, ImportRef, Symbol
from repocontext.index.projections.projection import PROJECTION_FORMAT, ProjectionState
from repocontext.store.records import pack

# PROJECTION_FORMAT -> digest of every record the outlines below project to (as they stood
# when it was recorded: format 2 added ShapeTest.java and Use.java's wildcard import; format 3
# a test helper named like a referenced name, `use crate::Thing` and a header/source pair;
# format 4 a function's local helper, named like a referenced name; format 5 a Go file naming
# a package it does not import; format 6 a library file naming a function of an example;
# format 7 a name a source and a test file define, used by a file importing neither; format 8
# a C file naming what a header and its source define without including the header, a C#
# alias of a generic type and a Rust `#[path]` module; format 9 a name of the standard
# collections' methods, defined once in the repository; format 10 a name imported from a
# third-party Python module; format 11 a C file including a header whose source file
# exists: both are its imports; format 12 Java wildcard imports marked `*`, evidence of a
# covering test only beside another; format 13 an explicit import of a file replacing a
# wildcard one reaching it; format 14 a Rust integration test named after a module; format
# 15 a method's name used bare (no link) and as a member (a link); format 16 an angle-bracket
# include with a directory; format 17 `instance`, a stoplisted name; format 18 a JavaScript
# import of a package of the repository by its name; format 19 a name an imported barrel
# re-exports; format 20 a Go method's name used bare).
RECORDED = {
    1: "dabc78ba6392c4936afd24756cc769fa975548f4d8c644b6c57fa0a4c149022c",
    2: "c8aa09934d2d52de62876032d9530544f0c016e51f7834a020ca025c3c5017f2",
    3: "4eba479241fa5aebbf53845cd731c89f9ae2b6a2a4b2df5be06a06563d770e3d",
    4: "dddac046214fea2d17c1046ff77e273c255ef57fe4a941399da80bda3454562b",
    5: "1c41b94f1267f81ee724fff57d63e30910666006a7f327020453913e4925f54f",
    6: "dd232434267d8bdcef69e0a05100b4d4a9484b7a486e91b33a783dca2d727d89",
    7: "68c1450d9f9d1d172510f536d0734a5929d4fbe0e9688247064eaeeb5562e3b1",
    8: "b4a4b84082b20c7c79b8163cb8bdab304ac8969ec23c6f9918c214fa7fb9e545",
    9: "049e23efa33deeef92edfbc68df8229be8b374f5a86800aaa9af4ab626ad7c64",
    10: "539b1b056a0e0eeb5707ed0bed338861cbba1b51f6b88f5f6d508b6be6fde8bb",
    11: "2d6b2adfe8411bccdd9d40ab80fd715e008f1fb91689453a557cc337d5465850",
    12: "6c5e006a9ecc2421648c35446f23455ec026c88126e93a631ae0b52f7829a48b",
    13: "0cdb6e4997dad2a44c67a28dd38fe5990158e572e9ed51b17bff710c06f798aa",
    14: "b572ed56388e1745146fc09d82448c23165d72565367e77a3fec43db7fd2b9d3",
    15: "4f4a83687072eb3e8276d56d2529ffc3785feb47df5c38dd0345045141a7da02",
    16: "f4d03eafde95db4fd4eea5507ca2420c1ffed5700fb621e563c627799aaa8486",
    17: "a9e505c8e51b4c0adceda6bf4310d842f2fe5bbe5fdb42eda6d89dba5addfe06",
    18: "4f97b3679732a122981dd1646542840efeeb850a740c6f53d72300bb6260c2cd",
    19: "b7aae5acc2c139802781061576794e40a6181314dda4c6b009a128384d43df60",
    20: "f7dc17507ed6a546c7173f17647f8cf2c227ca1a209652430b0b994758257bdc",
}


def sym(kind: str, name: str, fq: str, line: int, *children: Symbol) -> Symbol:
    return Symbol(kind, name, fq, f"{kind} {name}", line, line + 3, children)


OUTLINES = {
    "pkg/__init__.py": FileOutline("python"),
    "pkg/util.py": FileOutline(
        "python",
        symbols=(
            sym("constant", "DEFAULT", "pkg.util.DEFAULT", 1),
            sym(
                "function",
                "parse",
                "pkg.util.parse",
                3,
                sym("function", "tokenize", "pkg.util.parse.tokenize", 4),  # local
            ),
            sym(
                "class",
                "Helper",
                "pkg.util.Helper",
                6,
                sym("method", "run", "pkg.util.Helper.run", 7),
            ),
        ),
        imports=(ImportRef("os", "python", 1),),
        references=("os", "split"),
    ),
    "pkg/app.py": FileOutline(
        "python",
        symbols=(sym("function", "main", "pkg.app.main", 4),),
        imports=(
            ImportRef("pkg.util", "python", 1, names=("Helper", "parse")),
            ImportRef("", "python", 2, level=1, names=("util",)),
        ),
        references=("Helper", "parse", "render", "render_page", "tokenize"),
    ),
    "pkg/extra.py": FileOutline("python", references=("Helper", "remove", "instance")),  # (none)
    "pkg/model.py": FileOutline(
        "python",
        symbols=(
            sym(
                "class",
                "Model",
                "pkg.model.Model",
                1,
                sym("method", "reload", "pkg.model.Model.reload", 2),
            ),
        ),
    ),
    "pkg/views.py": FileOutline("python", references=("reload",)),  # a local `reload`: no link
    "pkg/cli.py": FileOutline(  # `model.reload()`: a link
        "python", references=("reload",), member_references=("reload",)
    ),
    "pkg/third.py": FileOutline(  # `parse` of a third-party module: no link to pkg/util.py
        "python",
        imports=(ImportRef("parsers", "python", 1, names=("parse",)),),
        references=("parse",),
    ),
    "pkg/store.py": FileOutline(
        "python",
        symbols=(
            sym("function", "remove", "pkg.store.remove", 1),
            sym("function", "instance", "pkg.store.instance", 5),
        ),
    ),
    "examples/demo.py": FileOutline(
        "python", symbols=(sym("function", "render_page", "examples.demo.render_page", 1),)
    ),
    "tests/test_util.py": FileOutline(
        "python",
        symbols=(
            sym("function", "test_parse", "tests.test_util.test_parse", 3),
            sym("function", "split", "tests.test_util.split", 8),  # a test helper
            sym("class", "Helper", "tests.test_util.Helper", 12),  # a fake named as pkg's
        ),
        imports=(ImportRef("pkg.util", "python", 1, names=("parse",)),),
        references=("parse",),
    ),
    "web/index.js": FileOutline(
        "javascript",
        symbols=(sym("function", "start", "web.index.start", 2),),
        imports=(ImportRef("./lib", "js", 1),),
        references=("helper",),
    ),
    "web/lib/index.js": FileOutline(
        "javascript", symbols=(sym("function", "helper", "web.lib.index.helper", 1),)
    ),
    "web/lib/index.test.js": FileOutline(
        "javascript", imports=(ImportRef("./index.js", "js", 1),), references=("helper",)
    ),
    "go/a/a.go": FileOutline(
        "go", symbols=(sym("function", "Render", "go.a.a.Render", 3),), package="a"
    ),
    "go/b/b.go": FileOutline(
        "go",
        imports=(ImportRef("example.com/m/go/a", "go", 3),),
        references=("Render",),
        package="b",
    ),
    "go/a/a_test.go": FileOutline("go", references=("Render",), package="a"),
    "go/c/c.go": FileOutline("go", references=("Render",), package="c"),  # (not imported)
    "java/com/x/Shape.java": FileOutline(
        "java", symbols=(sym("class", "Shape", "java.com.x.Shape.Shape", 3),), package="com.x"
    ),
    "java/com/y/Use.java": FileOutline(
        "java",
        imports=(
            ImportRef("com.x.Shape", "java", 3),
            ImportRef("com.x", "java", 4, names=("*",)),
        ),
        references=("Shape",),
        package="com.y",
    ),
    "java/test/com/x/ShapeTest.java": FileOutline(
        "java", imports=(ImportRef("com.x", "java", 3, names=("*",)),), package="com.x"
    ),
    "src/lib.rs": FileOutline(
        "rust",
        symbols=(sym("struct", "Thing", "src.lib.Thing", 3),),
        imports=(ImportRef("util", "rust_mod", 1), ImportRef("sys/unix.rs", "rust_mod_path", 2)),
    ),
    "src/sys/unix.rs": FileOutline("rust"),
    "src/other.rs": FileOutline("rust", imports=(ImportRef("crate::Thing", "rust_use", 1),)),
    "src/util.rs": FileOutline("rust", symbols=(sym("function", "tidy", "src.util.tidy", 1),)),
    "tests/util.rs": FileOutline("rust"),  # an integration test named after src/util.rs
    "c/m.h": FileOutline("c", symbols=(sym("function", "area", "c.m.area", 1),)),
    "c/m.c": FileOutline(
        "c",
        symbols=(sym("function", "area", "c.m.area", 4),),
        imports=(
            ImportRef("m.h", "c_include", 1),
            ImportRef("stdio.h", "c_include", 2, system=True),
        ),
        references=("area",),
    ),
    "c/main.c": FileOutline("c", imports=(ImportRef("m.h", "c_include", 1),), references=("area",)),
    "c/tool.c": FileOutline("c", references=("area",)),  # (m.h through another header)
    "c/cli.c": FileOutline("c", imports=(ImportRef("c/m.h", "c_include", 1, system=True),)),
    "cs/Rope.cs": FileOutline(
        "csharp", symbols=(sym("class", "Rope", "cs.Rope.Rope", 3),), package="Acme.Text"
    ),
    "cs/App.cs": FileOutline(
        "csharp", imports=(ImportRef("R = Acme.Text.Rope<int>", "csharp", 1),), package="Acme"
    ),
    "README.md": None,
    "web/app.js": FileOutline("javascript", imports=(ImportRef("webkit/button", "js", 1),)),
    "web/kit/button.js": FileOutline("javascript"),
    "web/kit/package.json": None,  # declares "webkit" (DECLARED below)
}
DECLARED = {"web/kit/package.json": "webkit"}
OUTLINES.update(
    {  # a Go method is a member: a bare `Restart` (a parameter) is no use of it
        "go/a/srv.go": FileOutline(
            "go", symbols=(sym("method", "Restart", "go.a.srv.Server.Restart", 3),), package="a"
        ),
        "go/a/cli.go": FileOutline("go", references=("Restart",), package="a"),
    }
)
OUTLINES.update(
    {  # `shade` is defined twice; the barrel a file imports re-exports one of them
        "web/shades/a.js": FileOutline(
            "javascript", symbols=(sym("function", "shade", "a.shade", 1),)
        ),
        "web/shades/b.js": FileOutline(
            "javascript", symbols=(sym("function", "shade", "b.shade", 1),)
        ),
        "web/barrel.js": FileOutline(
            "javascript", imports=(ImportRef("./shades/b", "js_export", 1),)
        ),
        "web/paint.js": FileOutline(
            "javascript", imports=(ImportRef("./barrel", "js", 1),), references=("shade",)
        ),
    }
)


def projected_digest() -> tuple[str, int]:
    state = ProjectionState("demo")
    for path, outline in OUTLINES.items():
        node = {"path": path, "language": outline and outline.language}
        state.stage(path, {**node, "package": DECLARED.get(path)}, outline)
    records: list[tuple[str, str, bytes]] = []
    state.commit(
        "example.com/m", emit=lambda tree, key, value, *_: records.append((tree, key, pack(value)))
    )
    digest = hashlib.sha256()
    for tree, key, packed in sorted(records):
        digest.update(f"{tree}\0{key}\0".encode() + packed)
    return digest.hexdigest(), len(records)


def test_the_projection_records_of_this_format_are_the_recorded_ones():
    digest, count = projected_digest()
    assert count == 90
    assert RECORDED.get(PROJECTION_FORMAT) == digest, (
        "The projection records changed. Bump PROJECTION_FORMAT in "
        "repocontext/index/projections/projection.py (stores stamped with the old format then "
        f"rebuild instead of adopting records the new code would not write) and record {digest!r} "
        "for it in RECORDED."
    )
