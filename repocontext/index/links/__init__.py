"""Links between repository files: imports, references and covering tests.

Pure functions over values (no store, no tree-sitter, no filesystem): :mod:`.repo_files`
indexes a repository's paths once, :mod:`.resolve` turns outlines into ``import`` links,
:mod:`.references` into ``reference`` links, :mod:`.coverage` finds the ``test`` links, and
:mod:`.facts` is what of one file they are computed from.
"""

__all__: list[str] = []
