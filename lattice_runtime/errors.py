"""The exception tree of ``lattice_runtime``.

::

    LatticeError                          lattice.error

Subclasses arrive with the runtime's issues; each carries a stable ``code``.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["LatticeError"]


class LatticeError(Exception):
    """Root of every error raised by ``lattice_runtime``.

    Attributes:
        code: Stable, dotted identifier of the failure.
        message: What went wrong.
        hint: What the caller can do next.
    """

    code: ClassVar[str] = "lattice.error"

    def __init__(self, message: str, *, hint: str = "Check the request and try again.") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
