"""The container image without Docker: its shape, and its entrypoint run with its environment.

docker/Dockerfile and docker/compose.yaml are parsed; the image's exact ENTRYPOINT + CMD is
then run from this checkout's virtual environment with exactly the image's ENV, the container
paths (/data, /workspace, /archive) mapped to temporary directories and the port to a free one.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import yaml
from mcp import Client

from repocontext.settings import Settings
from repocontext.testing import free_port, tool_ok, wait_live

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "docker" / "Dockerfile"
COMPOSE = ROOT / "docker" / "compose.yaml"
VENV_BIN = Path(sys.executable).parent
IMAGE_VENV_BIN = "/opt/venv/bin"
MOUNTS = ("/data", "/workspace", "/archive")
# What the python base image sets before the Dockerfile's own ENV lines.
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}


@dataclass
class Image:
    """The final stage of the Dockerfile, as far as running it is concerned."""

    env: dict[str, str] = field(default_factory=lambda: dict(BASE_ENV))
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    user: str = "root"
    workdir: str = "/"
    healthcheck: list[str] = field(default_factory=list)
    exposed: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)  # sources of COPY from the build context


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) pairs: comments dropped, continuation lines joined."""
    joined: list[tuple[str, str]] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or (not line and not current):
            continue  # Docker drops comment lines, also inside a continued instruction
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        keyword, _, rest = (current + line).strip().partition(" ")
        joined.append((keyword.upper(), rest.strip()))
        current = ""
    return joined


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: env.get(m.group(1), ""), value)


def _parse_image(text: str) -> Image:
    instructions = _instructions(text)
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    image = Image()
    for keyword, rest in instructions[last_from + 1 :]:
        if keyword == "ENV":
            for pair in shlex.split(rest):
                name, sep, value = pair.partition("=")
                assert sep, f"ENV {pair!r}: use the KEY=value form"
                image.env[name] = _expand(value, image.env)
        elif keyword in ("ENTRYPOINT", "CMD"):
            setattr(image, keyword.lower(), json.loads(rest))  # exec form, or this fails
        elif keyword == "USER":
            image.user = rest
        elif keyword == "WORKDIR":
            image.workdir = rest
        elif keyword == "EXPOSE":
            image.exposed += rest.split()
        elif keyword == "HEALTHCHECK":
            _, cmd, command = rest.partition(" CMD ")
            assert cmd, "HEALTHCHECK without CMD"
            image.healthcheck = json.loads(command)  # exec form, or this fails
    for keyword, rest in instructions:
        if keyword == "COPY" and not rest.startswith("--from"):
            image.copied += shlex.split(rest)[:-1]
    return image


@pytest.fixture(scope="module")
def image() -> Image:
    return _parse_image(DOCKERFILE.read_text())


@pytest.fixture(scope="module")
def service() -> dict[str, Any]:
    compose = yaml.safe_load(COMPOSE.read_text())
    [(_, spec)] = compose["services"].items()
    assert isinstance(spec, dict)
    return {**spec, "_named_volumes": set(compose.get("volumes") or {})}


def test_image_runs_as_a_fixed_non_root_user(image: Image) -> None:
    user = image.user.split(":")[0]
    assert user not in ("", "root", "0")


def test_image_healthcheck_probes_readiness_in_exec_form(image: Image) -> None:
    assert image.healthcheck[0] == "python"
    assert "/health/ready" in " ".join(image.healthcheck)
    assert "REPOCONTEXT_PORT" in " ".join(image.healthcheck)


def test_image_serves_workspace_mode_over_http_on_8080(
    image: Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in os.environ:
        if name.startswith("REPOCONTEXT_"):
            monkeypatch.delenv(name)
    for name, value in image.env.items():
        if name.startswith("REPOCONTEXT_"):
            monkeypatch.setenv(name, value)
    settings = Settings()
    assert (settings.transport, settings.host, settings.port) == ("http", "0.0.0.0", 8080)
    assert (settings.data_dir, settings.workspace_root) == (Path("/data"), Path("/workspace"))
    assert (settings.repo, settings.enable_writes) == (None, True)
    assert (settings.archive_dir, settings.archive_restore) == (Path("/archive"), "auto")
    assert settings.auth_tokens_file is None  # a tokens file is the operator's to mount
    assert image.exposed == ["8080"]


def test_image_and_compose_set_only_real_settings(image: Image, service: dict[str, Any]) -> None:
    names = [*image.env, *(service.get("environment") or {})]
    unknown = [
        name
        for name in names
        if name.startswith("REPOCONTEXT_")
        and name.removeprefix("REPOCONTEXT_").lower() not in Settings.model_fields
    ]
    assert unknown == []


def test_image_copies_only_files_of_the_checkout(image: Image) -> None:
    assert image.copied
    assert [source for source in image.copied if not (ROOT / source).exists()] == []


def test_compose_builds_the_image_from_the_checkout(service: dict[str, Any]) -> None:
    context = (COMPOSE.parent / service["build"]["context"]).resolve()
    assert context == ROOT
    assert (context / service["build"]["dockerfile"]).resolve() == DOCKERFILE


def test_compose_publishes_port_8080(service: dict[str, Any]) -> None:
    published = [str(port).rsplit(":", 2)[-2:] for port in service["ports"]]
    assert ["8080", "8080"] in published


def test_compose_keeps_data_in_a_named_volume_archive_on_the_host_workspace_read_only(
    service: dict[str, Any],
) -> None:
    mounts = {mount["target"]: mount for mount in service["volumes"]}
    assert set(MOUNTS) <= set(mounts)
    data, workspace, archive = (mounts[target] for target in MOUNTS)
    assert data["type"] == "volume" and data["source"] in service["_named_volumes"]
    assert (archive["type"], archive.get("read_only", False)) == ("bind", False)
    assert (workspace["type"], workspace.get("read_only")) == ("bind", True)


def _container_env(image: Image, tmp_path: Path, port: int) -> dict[str, str]:
    """The image's environment with its paths mapped into ``tmp_path`` and a free port."""

    def mapped(value: str) -> str:
        for mount in MOUNTS:
            if value == mount or value.startswith(mount + "/"):
                return str(tmp_path / mount.lstrip("/")) + value.removeprefix(mount)
        return value

    env = {name: mapped(value) for name, value in image.env.items()}
    env["PATH"] = env["PATH"].replace(IMAGE_VENV_BIN, str(VENV_BIN))
    env["REPOCONTEXT_PORT"] = str(port)
    env["HOME"] = str(tmp_path / "home")  # Docker sets HOME from the image user's passwd entry
    for mount in (*MOUNTS, "/home"):
        (tmp_path / mount.lstrip("/")).mkdir()
    return env


def _resolved(argv: list[str], env: dict[str, str]) -> list[str]:
    program = shutil.which(argv[0], path=env["PATH"])
    assert program is not None, f"{argv[0]} is not on the image's PATH"
    return [program, *argv[1:]]


async def _call_tools(base: str) -> tuple[set[str], dict[str, Any], dict[str, Any]]:
    async with Client(f"{base}/mcp") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        listing = tool_ok(await client.call_tool("repocontext_list_repos", {}))
        health = tool_ok(await client.call_tool("repocontext_health", {}))
    return names, listing, health


@pytest.mark.timeout(180)
def test_image_entrypoint_serves_mcp_with_the_image_environment(
    image: Image, tmp_path: Path
) -> None:
    port = free_port()
    env = _container_env(image, tmp_path, port)
    argv = _resolved([*image.entrypoint, *image.cmd], env)
    assert argv[0] == str(VENV_BIN / "repocontext")
    base = f"http://127.0.0.1:{port}"
    with (tmp_path / "server.log").open("wb") as log:
        server = subprocess.Popen(
            argv, env=env, cwd=env["HOME"], stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
    try:
        wait_live(base, server)
        ready = httpx2.get(f"{base}/health/ready", timeout=10)
        # 503 is documented for a store that does not answer and for retrieval still building.
        assert ready.status_code == 200 or ready.json().get("retrievalPhase") == "building"
        probe = subprocess.run(_resolved(image.healthcheck, env), env=env, check=False, timeout=30)
        assert (probe.returncode == 0) == (ready.status_code == 200)
        names, listing, health = anyio.run(_call_tools, base)
        assert listing["repos"] == []
        assert health["retrievalPhase"] == "nothing_registered"
        assert "repocontext_remember" in names  # writes are on: the image is a curator's server
    finally:
        server.terminate()  # what `docker stop` sends first
        returncode = server.wait(timeout=60)
    log_text = (tmp_path / "server.log").read_text()
    # uvicorn shuts down cleanly, then re-raises the signal (exit status 143 in a container).
    assert returncode in (0, -signal.SIGTERM), log_text
    assert "Application shutdown complete" in log_text
