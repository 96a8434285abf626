"""Group ``lowering``: patch lowering is exact (``docs/lattice-grants.md``, Replacements).

One tracked file, ``src/table.py``: 6 header lines, then the granted slice (24 unique
``ROW_<name>`` lines and one line, ``TOTAL = TOTAL + 1``, that occurs twice), then 6 footer
lines. The slice (lines 7-32) is granted once, as one ``replace_text`` slice, through the real
:class:`GrantRegistry`; every case lowers a one-replacement patch with the real :func:`lower`:

- 24 unique sources (a whole row line, or a token only that row has) are accepted, and the
  lowered bytes equal the file with exactly that edit;
- 12 sources that occur more than once inside the slice (the duplicated line, parts of it,
  text every row shares, the empty string) are refused with ``replacement_source_ambiguous``;
- 12 sources that occur in the file only outside the granted lines (each header and footer
  line) are refused with ``replacement_outside_grant``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from lattice_runtime.errors import LoweringError
from lattice_runtime.evidence.case import SafetyCase, outcome_case
from lattice_runtime.grants import Binding, GrantRegistry, fingerprint, operations_for
from lattice_runtime.patch import lower
from lattice_runtime.protocol import PatchProposal, Replacement, ReplaceText

_GROUP: Final = "lowering"
PATH: Final = "src/table.py"
NAMES: Final[tuple[str, ...]] = (
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa",
    "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray",
)  # fmt: skip
DUPLICATE: Final = "TOTAL = TOTAL + 1\n"
HEADER: Final[tuple[str, ...]] = tuple(
    f"HEADER_{n:02d} = 'kept out {n:02d}'\n" for n in range(1, 7)
)
FOOTER: Final[tuple[str, ...]] = tuple(
    f"FOOTER_{n:02d} = 'kept out {n:02d}'\n" for n in range(1, 7)
)
ROWS: Final[tuple[str, ...]] = tuple(
    f"ROW_{name} = compute('{name}', {n})\n" for n, name in enumerate(NAMES, 1)
)
SLICE: Final[tuple[str, ...]] = (*ROWS[:8], DUPLICATE, *ROWS[8:16], DUPLICATE, *ROWS[16:])
LINES: Final[tuple[str, ...]] = (*HEADER, *SLICE, *FOOTER)
GRANTED: Final = (len(HEADER) + 1, len(HEADER) + len(SLICE))
"""The granted lines, 1-based inclusive: 7-32."""

AMBIGUOUS: Final[tuple[str, ...]] = (
    DUPLICATE,
    "TOTAL = TOTAL + 1",
    "TOTAL + 1",
    "TOTAL",
    " = compute('",
    "ROW_",
    "compute(",
    "', ",
    ")\n",
    "\n",
    "a', ",
    "",
)
ABSENT: Final[tuple[str, ...]] = tuple(line.rstrip("\n") for line in (*HEADER, *FOOTER))


def lowering_cases(repo_root: Path, binding: Binding) -> tuple[SafetyCase, ...]:
    """The group's 48 cases, lowered against ``repo_root`` holding :data:`PATH` committed.

    Args:
        repo_root: A git work tree whose ``src/table.py`` is ``"".join(LINES)``, committed.
        binding: The run binding on its ``HEAD``.

    Returns:
        24 unique, 12 ambiguous and 12 absent cases, in that order.
    """
    registry = GrantRegistry(binding)
    operations = operations_for(repo_root, PATH, whole_file=False, tracked=True, symlink=False)
    handle = registry.grant(PATH, fingerprint(repo_root, PATH), GRANTED, operations).handle
    cases: list[SafetyCase] = []
    for number, (old, new) in enumerate(unique_replacements(), 1):
        expected_bytes = "".join(LINES).replace(old, new).encode()
        cases.append(
            outcome_case(
                _GROUP,
                f"{_GROUP}.unique.{number:02d}",
                f"{old!r} occurs once, inside the granted lines 7-32: accepted, and the lowered "
                "bytes are the file with exactly that edit",
                "accepted: modify src/table.py, bytes equal the expected file",
                _observe(old, new, handle, registry, binding, repo_root, expected_bytes),
            )
        )
    for kind, table, reason, why in (
        ("ambiguous", AMBIGUOUS, "replacement_source_ambiguous", "occurs more than once inside"),
        ("absent", ABSENT, "replacement_outside_grant", "occurs only outside"),
    ):
        cases += [
            outcome_case(
                _GROUP,
                f"{_GROUP}.{kind}.{number:02d}",
                f"{old!r} {why} the granted lines 7-32: refused with {reason}",
                f"refused: {reason}",
                _observe(old, "CHANGED", handle, registry, binding, repo_root, b""),
            )
            for number, old in enumerate(table, 1)
        ]
    return tuple(cases)


def unique_replacements() -> tuple[tuple[str, str], ...]:
    """Whole row lines (odd rows) and a token only that row has (even rows)."""
    pairs: list[tuple[str, str]] = []
    for n, (name, row) in enumerate(zip(NAMES, ROWS, strict=True), 1):
        if n % 2:
            pairs.append((row, f"ROW_{name} = compute('{name}', {n * 100})  # edited\n"))
        else:
            pairs.append((f"'{name}', {n})", f"'{name.upper()}', -{n})"))
    return tuple(pairs)


def _observe(
    old: str,
    new: str,
    handle: str,
    registry: GrantRegistry,
    binding: Binding,
    repo_root: Path,
    expected_bytes: bytes,
) -> str:
    change = ReplaceText(handle, (Replacement(old, new),))
    try:
        patch = lower(PatchProposal("one edit", (change,)), registry, binding, repo_root)
    except LoweringError as error:
        return f"refused: {error.reason}"
    (lowered,) = patch.changes
    same = "equal" if lowered.new_content == expected_bytes else "differ from"
    return f"accepted: {lowered.action} {lowered.path}, bytes {same} the expected file"
