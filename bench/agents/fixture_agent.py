"""A scripted example agent for ``bench/paired.py``: it knows the two fixtures' fixes.

It is not a model. It exists so the paired harness can run end to end on this machine, and its
numbers show that the harness works, not how good any agent is.

Two modes, per the contract in ``docs/evaluation.md``:

- **Lattice mode** (the command worker; ``LATTICE_PROTOCOL_VERSION`` is set): reads the turn
  JSON on stdin and prints one protocol-v5 answer: a ``replace_text`` patch through the handle
  of the page that shows the code to change, or a context request for that file.
- **Direct mode** (``LATTICE_AGENT_MODE=direct``): reads ``{"goal", "repository"}`` on stdin
  and edits the file in the repository itself.

``--sloppy`` makes the deliberately careless variant. Its first attempt copies the code to
replace with a stray trailing space, so the text is not found. Directly, it tries once and
gives up. Under Lattice, the refusal comes back as a ``patch_revision`` turn, and the second
attempt copies the text exactly.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FIXES = (
    (
        "src/resetkit/service.py",
        "        self._passwords[token.user] = _digest(new_password)\n",
        "        self._passwords[token.user] = _digest(new_password)\n"
        "        self._tokens.mark_consumed(token.value)\n"
        '        self._audit.record("password_reset", token.user, now)\n',
    ),
    (
        "src/service.js",
        "    this.passwords.set(token.user, digest(newPassword));\n",
        "    this.passwords.set(token.user, digest(newPassword));\n"
        "    this.tokens.markConsumed(token.value);\n"
        "    this.audit.record('password_reset', token.user, now);\n",
    ),
)


def known_fix(repository: Path) -> tuple[str, str, str]:
    """The fix for the fixture ``repository`` holds (the first whose file exists)."""
    for path, old, new in FIXES:
        if (repository / path).is_file():
            return path, old, new
    raise SystemExit("fixture_agent: this repository is not one of the fixtures")


def careless(old: str) -> str:
    """The sloppy variant's first copy of the code to replace: a stray trailing space."""
    return old.rstrip("\n") + " \n"


def direct(request: dict[str, str], sloppy: bool) -> None:
    """Edit the repository in place (one attempt; no feedback comes back)."""
    repository = Path(request["repository"])
    path, old, new = known_fix(repository)
    target = repository / path
    text = target.read_text(encoding="utf-8")
    wanted = careless(old) if sloppy else old
    if wanted in text:
        target.write_text(text.replace(wanted, new, 1), encoding="utf-8")


def through_lattice(turn: dict[str, object], sloppy: bool) -> dict[str, object]:
    """One protocol-v5 answer to ``turn``."""
    path, old, new = known_fix(Path.cwd())
    pages = turn["pages"]
    assert isinstance(pages, list)
    page = next(
        (p for p in pages if p["path"] == path and p["permissions"] and old in p["content"]),
        None,
    )
    if page is None:
        return {
            "kind": "context_request",
            "requests": [{"reason": "the code the fix goes into", "pathHint": path}],
        }
    first_try = turn["kind"] != "patch_revision"
    replacement = {"oldContent": careless(old) if sloppy and first_try else old, "newContent": new}
    change = {
        "editHandle": page["editHandle"],
        "operation": "replace_text",
        "replacements": [replacement],
    }
    summary = "Consume the reset token once and record a password_reset audit event."
    return {
        "kind": "patch",
        "patch": {"summary": summary, "changes": [change], "verificationCommands": []},
    }


def main() -> int:
    sloppy = "--sloppy" in sys.argv[1:]
    request = json.load(sys.stdin)
    if os.environ.get("LATTICE_AGENT_MODE") == "direct":
        direct(request, sloppy)
        return 0
    print(json.dumps(through_lattice(request, sloppy)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
