"""Context economics: context bundles, pages from disk, reuse receipts, sessions, usage stats.

The face of pack for the layers above: the request a bundle is asked with
(:class:`ContextRequest`, its limits checked once), the typed bundle (:class:`Bundle` of
:class:`BundleEntry` and :class:`BundleUnit`), a :class:`Page` read from disk with its git
blob id and exact token count, the source of symbols by name (:class:`SymbolSources`), and
the usage figures (:class:`CallStats`). See
``docs/retrieval.md`` ("Context bundles", "Pages").
"""

from repocontext.pack.bundle import receipt
from repocontext.pack.model import Bundle, BundleEntry, BundleUnit, ReusedItem, UnitKind, wire_json
from repocontext.pack.page import MAX_PATH_CHARS, LineRange, Page
from repocontext.pack.request import (
    DEFAULT_BUDGET,
    DEFAULT_TOP,
    DETAILS,
    MAX_BUDGET,
    MAX_TOP,
    MIN_BUDGET,
    MIN_TOP,
    ContextRequest,
    Detail,
)
from repocontext.pack.stats import MAX_WINDOW_S, CallStats
from repocontext.pack.symbols import (
    MAX_MATCHES,
    MAX_NAMES,
    AmbiguousName,
    Enclosing,
    MissingSymbol,
    OmittedSymbol,
    SymbolSource,
    SymbolSources,
)

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_TOP",
    "DETAILS",
    "MAX_BUDGET",
    "MAX_MATCHES",
    "MAX_NAMES",
    "MAX_PATH_CHARS",
    "MAX_TOP",
    "MAX_WINDOW_S",
    "MIN_BUDGET",
    "MIN_TOP",
    "AmbiguousName",
    "Bundle",
    "BundleEntry",
    "BundleUnit",
    "CallStats",
    "ContextRequest",
    "Detail",
    "Enclosing",
    "LineRange",
    "MissingSymbol",
    "OmittedSymbol",
    "Page",
    "ReusedItem",
    "SymbolSource",
    "SymbolSources",
    "UnitKind",
    "receipt",
    "wire_json",
]
