"""Parsing one file: its language, its outline (tree-sitter queries as package data), its names.

Nothing here knows the store or other files: :mod:`.parser` turns one file's bytes into a
:class:`~repocontext.index.model.FileOutline`, :mod:`.languages` says which language a path
is written in and whether it is a test, :mod:`.manifests` reads the package name a manifest
declares.
"""

__all__: list[str] = []
