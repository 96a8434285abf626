"""The stdio server stops cleanly on SIGTERM or SIGINT while its client keeps stdin open."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest


def _request(ident: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def _reply(stdout: IO[bytes], ident: int) -> dict[str, Any]:
    while True:
        line = stdout.readline()
        assert line, "the server closed stdout"
        message = json.loads(line)
        if message.get("id") == ident:
            return dict(message)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_stdio_server_with_stdin_still_open(
    tmp_path: Path, stop: signal.Signals
) -> None:
    serve = ["serve", "--transport", "stdio", "--embedder", "off", "--reconcile", "off"]
    server = subprocess.Popen(
        [sys.executable, "-m", "repocontext", *serve, "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        initialize = _request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        # one message in two writes, then two messages in one write
        server.stdin.write(initialize[:20])
        server.stdin.flush()
        time.sleep(0.2)
        server.stdin.write(initialize[20:])
        server.stdin.flush()
        assert _reply(server.stdout, 1)["result"]["serverInfo"]["name"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        server.stdin.write(json.dumps(initialized).encode() + b"\n" + _request(2, "tools/list"))
        server.stdin.flush()
        tools = {tool["name"] for tool in _reply(server.stdout, 2)["result"]["tools"]}
        assert "repocontext_health" in tools

        server.send_signal(stop)  # stdin stays open: the client did not go away
        assert server.wait(timeout=20) == 0
        assert server.stderr is not None and b"Traceback" not in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
