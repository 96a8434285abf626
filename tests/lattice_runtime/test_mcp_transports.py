"""`lattice mcp` as a process: the fixture task end to end over stdio and streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from lattice_runtime.cli import app
from tests.lattice_runtime.fixture_repos import PY_GOAL, SERVICE, make_repo, pytest_exit
from tests.lattice_runtime.mcp_support import fixture_patch, ok

pytestmark = pytest.mark.anyio

LATTICE = (sys.executable, "-c", "from lattice_runtime.cli import main; main()")


async def drive_the_fixture_task(client: Client, repo: Path) -> None:
    """begin -> propose the fixture patch -> PASSED with a diff -> apply -> the tests pass."""
    assert pytest_exit(repo) != 0
    started = ok(await client.call_tool("lattice_begin", {"task": PY_GOAL}))
    task = started["taskId"]
    verdict = ok(
        await client.call_tool(
            "lattice_propose", {"taskId": task, "response": fixture_patch(started["pages"])}
        )
    )
    assert verdict["state"] == "PASSED"
    assert f"+++ b/{SERVICE}" in verdict["diff"]
    applied = ok(await client.call_tool("lattice_apply", {"taskId": task}))
    assert applied["files"] == [SERVICE]
    assert pytest_exit(repo) == 0
    stats = ok(await client.call_tool("lattice_stats", {}))
    assert stats["byState"] == {"PASSED": 1}


@pytest.mark.timeout(180)
async def test_the_fixture_task_passes_and_applies_over_stdio(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    server = StdioServerParameters(
        command=LATTICE[0],
        args=[*LATTICE[1:], "mcp", "--transport", "stdio", "--repo", str(repo)],
        env=dict(os.environ),  # PYTHONPATH: the code under test
        cwd=str(tmp_path),
    )
    async with Client(server) as client:
        await drive_the_fixture_task(client, repo)


class HttpServer:
    """`lattice mcp --transport http --port 0` in a subprocess, gated on its endpoint line."""

    def __init__(self, repo: Path) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [*LATTICE, "mcp", "--transport", "http", "--port", "0", "--repo", str(repo)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        announced = threading.Event()
        self._drain = threading.Thread(target=self._read, args=(announced,), daemon=True)
        self._drain.start()
        assert announced.wait(60), "no endpoint announced:\n" + "".join(self.lines)
        assert self.proc.poll() is None, "server exited:\n" + "".join(self.lines)
        line = next(line for line in self.lines if "MCP endpoint: " in line)
        self.url = line.split("MCP endpoint: ", 1)[1].split()[0]

    def _read(self, announced: threading.Event) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if "MCP endpoint: " in line:
                announced.set()
        announced.set()  # the process ended; the waiter checks poll()

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=20)
            self._drain.join(timeout=20)


@pytest.mark.timeout(180)
async def test_the_fixture_task_passes_and_applies_over_streamable_http(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    server = HttpServer(repo)
    try:
        assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith(":0/mcp")
        timeout = httpx2.Timeout(30.0, read=120.0)
        async with (
            httpx2.AsyncClient(timeout=timeout) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            await drive_the_fixture_task(client, repo)
    finally:
        server.stop()
    assert "Traceback" not in "".join(server.lines)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--transport", "sse"], "unknown transport"),
        (["--repo", "/no/such/directory"], "is not a directory"),
    ],
)
def test_lattice_mcp_refuses_a_bad_flag_with_a_coded_error(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    # (a later --repo wins over the first)
    result = CliRunner().invoke(app, ["mcp", "--repo", str(tmp_path), *flags])
    assert result.exit_code == 2
    assert "error [lattice.config_invalid]" in result.stderr and said in result.stderr


def test_lattice_mcp_refuses_a_port_in_use_before_serving(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(
            app, ["mcp", "--transport", "http", "--port", port, "--repo", str(repo)]
        )
    assert result.exit_code == 2
    assert "error [lattice.config_invalid]: cannot listen" in result.stderr
