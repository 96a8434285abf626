"""Shared by the benchmarks: replace (or append) one section of docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(title: str, section: str) -> None:
    """Put ``section`` (starting with the heading ``title``) in place of the old one."""
    text = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n\n"
    start = text.find(title)
    if start >= 0:
        end = text.find("\n## ", start + 1)
        rest = "" if end < 0 else "\n" + text[end + 1 :]
        text = text[:start] + section.rstrip("\n") + "\n" + rest
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOCS.write_text(text)
