"""A repository's files: which ones are indexed, their fingerprints, and their stored nodes.

:mod:`.walk` lists the files (git's view, else ``.gitignore`` rules), :mod:`.roots` checks a
repository root and turns a caller's path into a node's key path, :mod:`.fingerprint` computes
git blob ids, :mod:`.extract` reads and parses one file, :mod:`.nodes` is the stored form of
a file node.
"""

__all__: list[str] = []
