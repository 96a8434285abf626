import re
from pathlib import Path

import pytest
import typer.main

from repocontext.cli import app
from repocontext.mcp import build_server
from repocontext.settings import Settings
from repocontext.workspace import Workspace

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.anyio
async def test_every_tool_is_documented(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, enable_writes=True, workspace_root=tmp_path)
    with Workspace.open(settings) as ws:
        tools = await build_server(ws, settings).list_tools()
    text = (DOCS / "tools.md").read_text()
    assert tools
    assert [t.name for t in tools if f"## `{t.name}`" not in text] == []


def test_every_cli_command_and_flag_is_documented() -> None:
    text = (DOCS / "cli.md").read_text()
    command = typer.main.get_command(app)
    for name, sub in command.commands.items():  # type: ignore[attr-defined]  # a click Group
        assert f"## `repocontext {name}`" in text
        for param in sub.params:
            for flag in param.opts:
                assert flag in text or flag == "--help", f"{name} {flag}"


def test_every_setting_is_documented_with_its_variable() -> None:
    text = (DOCS / "configuration.md").read_text()
    for name in Settings.model_fields:
        assert f"| `{name}` |" in text
        assert f"`REPOCONTEXT_{name.upper()}`" in text


def test_every_setting_has_a_documented_serve_flag() -> None:
    text = (DOCS / "configuration.md").read_text()
    serve = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    flags = {flag for param in serve.params for flag in (*param.opts, *param.secondary_opts)}
    for name in Settings.model_fields:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{name}` |"))
        documented = re.findall(r"`(--[a-z-]+)`", row.split("|")[2])
        assert documented, f"{name} has no serve flag in configuration.md"
        assert set(documented) <= flags, f"{name}: {documented} not among serve's flags"


def test_the_library_example_of_the_architecture_page_runs() -> None:
    text = (DOCS / "architecture.md").read_text()
    section = text.split("## The library API", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(example, "docs/architecture.md", "exec"), {"__name__": "docs_example"})


def test_every_lattice_command_and_flag_is_documented() -> None:
    from lattice_runtime.cli import app as lattice_app

    text = (DOCS / "cli.md").read_text()
    command = typer.main.get_command(lattice_app)
    for name, sub in command.commands.items():  # type: ignore[attr-defined]  # a click Group
        assert f"## `lattice {name}`" in text
        subcommands = getattr(sub, "commands", {"": sub})
        for sub_name, leaf in subcommands.items():
            if sub_name:
                assert f"lattice {name} {sub_name}" in text
            for param in leaf.params:
                for flag in param.opts:
                    assert flag in text or flag == "--help" or not flag.startswith("-"), (
                        f"{name} {sub_name} {flag}"
                    )


def test_every_lattice_setting_is_documented_with_its_variable() -> None:
    from lattice_runtime.settings import LatticeSettings

    text = (DOCS / "lattice.md").read_text()
    for name in LatticeSettings.model_fields:
        assert f"| `{name}` |" in text
        assert f"`LATTICE_{name.upper()}`" in text
