"""Group ``paths``: paths stay inside the repository (``docs/lattice-grants.md``, create_file).

``create_file`` is the only change that names a path. Each case lowers a one-change patch
with the real :func:`lower` on a real git repository: 24 safe nested paths (spaces,
non-ASCII, dots inside names) are accepted as a creation with the content exactly as given;
8 paths climbing out with a leading ``../``, 8 climbing back out through ``a/b/../../`` and
8 absolute paths are refused with ``unsafe_destination`` before any file is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from lattice_runtime.errors import LoweringError
from lattice_runtime.evidence.case import SafetyCase, outcome_case
from lattice_runtime.grants import Binding, GrantRegistry
from lattice_runtime.patch import lower
from lattice_runtime.protocol import CreateFile, PatchProposal

_GROUP: Final = "paths"
_CONTENT: Final = "VALUE = 1\n"

REPOSITORY: Final[dict[str, str]] = {
    "README.md": "# evidence\n",
    "src/app.py": "def main():\n    return 0\n",
}
"""The scratch repository the group lowers against."""

SAFE_PATHS: Final[tuple[str, ...]] = (
    "src/new_module.py",
    "src/pkg/sub/feature.py",
    "src/pkg/sub/deeper/still/more.py",
    "lib/a b/c d.py",
    "docs/user guide/getting started.md",
    "src/my package/new file.py",
    "notes/2026/12/05.txt",
    "src/app_extra.py",
    "assets/img/logo.svg",
    "src/ünïcode/名前.py",
    "a/b/c/d/e/f/g/h.txt",
    "src/pkg/__init__.py",
    "src/handlers/http handler.py",
    "web/static/js/app.js",
    "src/x",
    "src/data/report 2026 (final).csv",
    "src/a..b.py",
    "src/v1.2.3/notes.md",
    "src/ leading space.py",
    "src/trailing space .py",
    "src/CAPS/Upper.PY",
    "src/app/models/user_model.py",
    "docs/émoji 🎉/page.md",
    "scripts/build-docs.sh",
)
PARENT_PATHS: Final[tuple[str, ...]] = (
    "../x",
    "../x.py",
    "../../x",
    "../../../etc/x",
    "../sibling/x.py",
    "../repo/src/x.py",
    "../a b/x.py",
    "../src/app.py",
)
NESTED_PARENT_PATHS: Final[tuple[str, ...]] = (
    "a/b/../../x",
    "a/b/../../../x",
    "a/b/../../../../x",
    "src/pkg/../../x.py",
    "src/../x",
    "a/../b/x",
    "a/b/c/../../x",
    "src/pkg/../../../outside/x.py",
)
ABSOLUTE_PATHS: Final[tuple[str, ...]] = (
    "/x",
    "/tmp/x",
    "/etc/cron.d/x",
    "//x",
    "/a/b/../x",
    "/home/user/x.py",
    "/x y/z.py",
    "/repo/src/new.py",
)


def path_cases(repo_root: Path, binding: Binding) -> tuple[SafetyCase, ...]:
    """The group's 48 cases, lowered against the scratch repository at ``repo_root``.

    Args:
        repo_root: A git work tree holding :data:`REPOSITORY`, committed.
        binding: The run binding on its ``HEAD``.

    Returns:
        24 safe, 8 ``../``, 8 ``a/b/../../`` and 8 absolute cases, in that order.
    """
    registry = GrantRegistry(binding)
    cases = [
        _case("safe", number, path, f"accepted: create {path} with the content as given")
        for number, path in enumerate(SAFE_PATHS, 1)
    ]
    for kind, table in (
        ("parent", PARENT_PATHS),
        ("nested-parent", NESTED_PARENT_PATHS),
        ("absolute", ABSOLUTE_PATHS),
    ):
        cases += [
            _case(kind, number, path, "refused: unsafe_destination")
            for number, path in enumerate(table, 1)
        ]
    return tuple(
        outcome_case(
            _GROUP, case_id, description, expected, _observe(path, registry, binding, repo_root)
        )
        for case_id, description, expected, path in cases
    )


def _case(kind: str, number: int, path: str, expected: str) -> tuple[str, str, str, str]:
    if expected.startswith("accepted"):
        description = (
            f"create_file {path!r} is accepted: a plain relative path inside the repository"
        )
    else:
        description = f"create_file {path!r} is refused: it is not a plain relative path"
    return f"{_GROUP}.{kind}.{number:02d}", description, expected, path


def _observe(path: str, registry: GrantRegistry, binding: Binding, repo_root: Path) -> str:
    proposal = PatchProposal("create one file", (CreateFile(path, _CONTENT),))
    try:
        patch = lower(proposal, registry, binding, repo_root)
    except LoweringError as error:
        return f"refused: {error.reason}"
    (change,) = patch.changes
    exact = change.new_content == _CONTENT.encode() and change.expected_fingerprint is None
    content = "with the content as given" if exact else "with other content"
    return f"accepted: {change.action} {change.path} {content}"
