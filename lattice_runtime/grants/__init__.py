"""Edit grants: opaque handles bound to a run, fingerprints, the per-class policy, the registry.

A worker never names a file it may write; it names a handle (``E1``, ``E2``, ...) the run
granted with a page. :mod:`.model` holds the values, :mod:`.fingerprint` which bytes a grant
was made on, :mod:`.policy` which operations a file's class allows, :mod:`.registry` the
handles of one run and their tamper-evident file. See ``docs/lattice-grants.md``.
"""

from lattice_runtime.grants.fingerprint import (
    Fingerprint,
    FingerprintKind,
    IndexSnapshot,
    blob_id,
    fingerprint,
    index_snapshot,
    probe_fingerprint,
    read_fingerprinted,
)
from lattice_runtime.grants.model import HANDLE_PATTERN, OPERATIONS, Binding, EditGrant, Operation
from lattice_runtime.grants.policy import (
    SLICE_OPERATIONS,
    WHOLE_FILE_OPERATIONS,
    is_config_path,
    is_ignored,
    is_protected,
    is_test_path,
    operations_for,
)
from lattice_runtime.grants.registry import GrantRegistry

__all__ = [
    "HANDLE_PATTERN",
    "OPERATIONS",
    "SLICE_OPERATIONS",
    "WHOLE_FILE_OPERATIONS",
    "Binding",
    "EditGrant",
    "Fingerprint",
    "FingerprintKind",
    "GrantRegistry",
    "IndexSnapshot",
    "Operation",
    "blob_id",
    "fingerprint",
    "index_snapshot",
    "is_config_path",
    "is_ignored",
    "is_protected",
    "is_test_path",
    "operations_for",
    "probe_fingerprint",
    "read_fingerprinted",
]
