"""repocontext: durable, conflict-free codebase memory for AI coding agents.

The public surface for a second consumer (the Lattice runtime, or any library user) is the
set of names each subpackage exports in ``__all__``: :mod:`repocontext.store` (the CRDT
store), :mod:`repocontext.workspace` (the facade over repositories) and
:mod:`repocontext.errors` (the exception tree). Modules whose names start with ``_`` are
private.
"""

from importlib.metadata import PackageNotFoundError, version

from repocontext.errors import RepoContextError

try:
    __version__ = version("repocontext-lattice")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["RepoContextError", "__version__"]
