"""The authority ledger: inputs seen, boundaries, receipts and mechanical receipts.

One record in the control state directory (``authority.json``), read and written under the
state lock. A receipt is stored with the epoch it was issued in and a ``consumed`` flag; the
flag is written (atomically) before the attempt is validated, so a receipt authorizes at
most one attempt even when the process dies right after.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from lattice_runtime.control._state import StateDir, sha256_of
from lattice_runtime.control.contract import InputFrontier
from lattice_runtime.control.epoch import Epoch
from lattice_runtime.control.errors import ReceiptConsumedError, ReceiptUnknownError

__all__ = ["Ledger", "MechanicalReceipt", "Receipt"]

_LEDGER: Final = "authority"
MAX_ATTEMPTS: Final = 1000
"""The newest mechanical receipts kept (older ones are dropped)."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """A one-use authorization: its random id and the epoch it was issued in."""

    id: str
    epoch: Epoch


@dataclass(frozen=True, slots=True)
class MechanicalReceipt:
    """What a guarded attempt did (recorded for every attempt; never proof of completion).

    Attributes:
        id: ``m-`` and 16 hex digits of the record's digest.
        call: The guarded call (``lattice_apply``...).
        arguments_digest: SHA-256 of the call's arguments.
        basis_digest: The epoch digest the attempt was checked against (``""`` if none).
        outcome: ``applied``, ``refused:<code>`` or ``failed:<code>``.
        result_digest: SHA-256 of the targets' digests after the attempt (``""`` if refused).
        receipt: The authorization receipt it consumed (``""`` if none).
    """

    id: str
    call: str
    arguments_digest: str
    basis_digest: str
    outcome: str
    result_digest: str
    receipt: str


class Ledger:
    """The authority record of one repository (call its methods under the state lock)."""

    def __init__(self, state: StateDir) -> None:
        """Keep the ledger in ``state``."""
        self._state = state

    def _read(self) -> dict[str, Any]:
        raw = self._state.read(_LEDGER)
        if raw is None:
            return {
                "input": {"sequence": 0, "digest": ""},
                "boundaries": 0,
                "preconditions": {},
                "receipts": {},
                "attempts": [],
            }
        return raw

    def input(self) -> InputFrontier:
        """The latest human message seen."""
        raw = self._read()["input"]
        return InputFrontier(int(raw["sequence"]), str(raw["digest"]))

    def boundaries(self) -> int:
        """How many handoffs, delegations, resumes and compactions were reported."""
        return int(self._read()["boundaries"])

    def observed(self) -> dict[str, str]:
        """The latest digest reported for each external precondition."""
        return {str(k): str(v) for k, v in self._read()["preconditions"].items()}

    def note_input(self, frontier: InputFrontier) -> None:
        """Record a human message (an older sequence than the latest seen changes nothing)."""
        record = self._read()
        if frontier.sequence > int(record["input"]["sequence"]):
            record["input"] = {"sequence": frontier.sequence, "digest": frontier.digest}
            self._state.write(_LEDGER, record)

    def note_boundary(self) -> None:
        """Count a boundary."""
        record = self._read()
        record["boundaries"] = int(record["boundaries"]) + 1
        self._state.write(_LEDGER, record)

    def note_preconditions(self, digests: Mapping[str, str]) -> None:
        """Record the current digests of external preconditions."""
        record = self._read()
        record["preconditions"] = {**record["preconditions"], **digests}
        self._state.write(_LEDGER, record)

    def issue(self, receipt: Receipt) -> None:
        """Store a new receipt, unconsumed."""
        record = self._read()
        record["receipts"][receipt.id] = {"epoch": receipt.epoch.to_record(), "consumed": False}
        self._state.write(_LEDGER, record)

    def consume(self, receipt_id: str) -> Receipt:
        """Mark a receipt consumed (written before anything else happens) and return it.

        Raises:
            ReceiptUnknownError: It was never issued here.
            ReceiptConsumedError: An earlier attempt consumed it.
        """
        record = self._read()
        entry = record["receipts"].get(receipt_id)
        if entry is None:
            raise ReceiptUnknownError(f"receipt {receipt_id[:40]!r} was never issued here")
        if entry["consumed"]:
            raise ReceiptConsumedError(f"receipt {receipt_id[:40]!r} was used already")
        entry["consumed"] = True
        self._state.write(_LEDGER, record)
        return Receipt(receipt_id, Epoch.from_record(entry["epoch"]))

    def record_attempt(
        self, call: str, arguments: object, basis: str, outcome: str, result: str, receipt: str
    ) -> MechanicalReceipt:
        """Append the mechanical receipt of one guarded attempt."""
        body = {
            "call": call,
            "argumentsDigest": sha256_of(arguments),
            "basisDigest": basis,
            "outcome": outcome,
            "resultDigest": result,
            "receipt": receipt,
        }
        body["id"] = f"m-{sha256_of([body, len(self._read()['attempts'])])[:16]}"
        record = self._read()
        record["attempts"] = [*record["attempts"], body][-MAX_ATTEMPTS:]
        self._state.write(_LEDGER, record)
        return _mechanical(body)

    def attempts(self) -> list[MechanicalReceipt]:
        """The mechanical receipts, oldest first."""
        return [_mechanical(body) for body in self._read()["attempts"]]


def _mechanical(body: Mapping[str, Any]) -> MechanicalReceipt:
    return MechanicalReceipt(
        id=str(body["id"]),
        call=str(body["call"]),
        arguments_digest=str(body["argumentsDigest"]),
        basis_digest=str(body["basisDigest"]),
        outcome=str(body["outcome"]),
        result_digest=str(body["resultDigest"]),
        receipt=str(body["receipt"]),
    )
