"""Lowering worker output to the internal patch IR, with exact replacement rules.

:mod:`.ir` is the patch IR the transaction applies; :mod:`.lower` is the only way to make
one from a worker's proposal, checking every change against its edit grant. See
``docs/lattice-grants.md`` for the rules and the reason codes.
"""

from lattice_runtime.patch.ir import FileAction, FileChange, PatchIR
from lattice_runtime.patch.lower import TRANSACTION_FIELDS, lower, reject_transaction_fields

__all__ = [
    "TRANSACTION_FIELDS",
    "FileAction",
    "FileChange",
    "PatchIR",
    "lower",
    "reject_transaction_fields",
]
