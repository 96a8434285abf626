"""Package manifests: the name a ``package.json`` or a ``Cargo.toml`` publishes its directory as.

Read when a file is extracted (the name is the manifest's ``package``, as a Java file's is its
package declaration); import resolution then finds ``import "pkg"`` or ``use pkg::x`` of a
package of the repository by that name.
"""

from __future__ import annotations

import json
import tomllib
from typing import Final

__all__ = ["MANIFESTS", "manifest_name"]

MANIFESTS: Final = ("package.json", "Cargo.toml")
"""Files naming the package of their directory: its published name resolves imports of it."""


def manifest_name(path: str, text: str) -> str | None:
    """The package a manifest declares: ``package.json``'s ``name``, a ``Cargo.toml``'s crate.

    A crate is named as Rust code names it: ``[lib] name``, else ``[package] name`` with
    ``-`` as ``_`` (``mini-redis`` -> ``mini_redis``). ``None`` for other files, for one under
    ``node_modules/`` (an installed copy, not the repository's package), and for a manifest
    without a string name or that does not parse (a workspace's root ``Cargo.toml``).
    """
    name = path.rpartition("/")[2]
    if name not in MANIFESTS or "node_modules/" in f"/{path}":
        return None
    try:
        if name == "package.json":
            declared = json.loads(text.removeprefix("\ufeff")).get("name")
        else:
            data = tomllib.loads(text)
            lib, package = data.get("lib") or {}, data.get("package") or {}
            declared = lib.get("name") or package.get("name")
            if isinstance(declared, str):
                declared = declared.replace("-", "_")
    # (JSON or TOML errors, a manifest that is not a table, one nested too deep to parse)
    except (ValueError, AttributeError, TypeError, RecursionError):
        return None
    if isinstance(declared, str) and declared and declared.strip() == declared:
        return declared
    return None
