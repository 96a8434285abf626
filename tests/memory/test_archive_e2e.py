"""The memory archive end to end: a real ``repocontext serve`` process over HTTP remembers
entries, stops gracefully (exporting), loses its whole data directory, starts again and
restores every entry; a second restore changes nothing."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repocontext.settings import Settings
from repocontext.store import MEMORY, Store
from repocontext.store.archive import read_archive
from repocontext.testing import free_port, tool_ok, wait_live
from repocontext.workspace import Workspace

pytestmark = pytest.mark.anyio

KEPT = ("key", "exists", "kind", "repoId", "topic", "id", "fields", "tags", "links", "expiresAt")


def serve(data: Path, root: Path, archive: Path, restore: str, log: Path) -> tuple[Any, str]:
    port = free_port()
    cli = str(Path(sys.executable).parent / "repocontext")
    args = [cli, "serve", "--transport", "http", "--port", str(port), "--data-dir", str(data)]
    args += ["--workers", "1"]
    args += ["--enable-writes", "--workspace-root", str(root)]
    env = {
        **os.environ,
        "REPOCONTEXT_EMBEDDER": "off",
        "REPOCONTEXT_RECONCILE": "off",
        "REPOCONTEXT_ARCHIVE_DIR": str(archive),
        "REPOCONTEXT_ARCHIVE_RESTORE": restore,
        "REPOCONTEXT_ARCHIVE_INTERVAL_SECONDS": "3600",
    }
    server = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=log.open("ab"))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_live(base, server)
    except RuntimeError:
        server.kill()
        raise AssertionError(log.read_text()) from None
    return server, base


def stop(server: Any, log: Path, signum: int) -> None:
    server.send_signal(signum)  # graceful: the workspace closes and exports
    assert server.wait(60) == 0, log.read_text()


async def call(base: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(f"{base}/mcp") as client:
        return tool_ok(await client.call_tool(tool, args))


async def recall_all(base: str, keys: list[str]) -> dict[str, dict[str, Any]]:
    async with Client(f"{base}/mcp") as client:
        views = [tool_ok(await client.call_tool("repocontext_recall", {"key": k})) for k in keys]
    return {view["key"]: view for view in views}


def kept(view: dict[str, Any], *extra: str) -> dict[str, Any]:
    return {name: view.get(name) for name in (*KEPT, *extra)}


async def remember_entries(base: str) -> list[str]:
    async with Client(f"{base}/mcp") as client:

        async def remember(**args: Any) -> str:
            view = tool_ok(await client.call_tool("repocontext_remember", args))
            return str(view["key"])

        first = await remember(
            repoId="proj",
            topic="decisions",
            kind="decision",
            title="Use LMDB",
            body="Embedded and durable.\nSecond line.",
            author="agent-1",
            provenance="design review",
            tags=["store", "durability"],
            addLinks={"anchoredTo": ["repo/proj/file/a.py"]},
        )
        second = await remember(
            repoId="proj",
            topic="gotchas",
            title="Expiring note",
            tags=["ttl"],
            ttlSeconds=86_400,
            addLinks={"related": [first]},
        )
        gone = await remember(repoId="proj", topic="todo", title="forgotten soon")
        tool_ok(await client.call_tool("repocontext_forget", {"key": gone}))
        claim = tool_ok(await client.call_tool("repocontext_claim", {"key": first, "owner": "w"}))
        assert claim["fencingToken"] == 1
        release = {"key": first, "fencingToken": 1}
        tool_ok(await client.call_tool("repocontext_release_claim", release))
    return [first, second, gone]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "signum",
    [
        pytest.param(signal.SIGINT, id="sigint"),
        pytest.param(signal.SIGTERM, id="sigterm"),
    ],
)
async def test_memory_survives_losing_the_data_directory_and_a_second_restore_changes_nothing(
    tmp_path: Path, signum: int
) -> None:
    root, data, archive = tmp_path / "ws", tmp_path / "data", tmp_path / "archive"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "a.py").write_text("x = 1\n")
    log = tmp_path / "server.log"
    with Workspace.open(Settings(data_dir=data, workspace_root=root, embedder="off")) as ws:
        ws.bootstrap(root / "proj", "proj", background=False)

    server, base = serve(data, root, archive, "auto", log)
    try:
        keys = await remember_entries(base)
        before = await recall_all(base, keys)
    finally:
        stop(server, log, signum)
    snapshot = (archive / "memory.rcarch").read_bytes()
    assert len(read_archive(archive / "memory.rcarch")[1]) == 3  # the tombstone too
    assert before[keys[2]]["exists"] is False

    shutil.rmtree(data)
    server, base = serve(data, root, archive, "auto", log)
    try:
        restored = await recall_all(base, keys)
    finally:
        stop(server, log, signum)
    assert {k: kept(v) for k, v in restored.items()} == {k: kept(v) for k, v in before.items()}
    # Restored into an empty store: nothing new to export, the snapshot is untouched.
    assert (archive / "memory.rcarch").read_bytes() == snapshot
    assert not (archive / "memory.rcarch.prev").exists()
    with Store.open(data) as store:
        seq = store.last_seq()

    server, base = serve(data, root, archive, "always", log)
    try:
        again = await recall_all(base, keys)
        with Store.open(data, read_only=True) as store:
            assert store.last_seq() == seq  # the second restore wrote nothing
        same = {k: kept(v, "version") for k, v in again.items()}
        assert same == {k: kept(v, "version") for k, v in restored.items()}
        claim = await call(base, "repocontext_claim", {"key": keys[0], "owner": "w2"})
        assert claim["fencingToken"] == 2  # the fencing register came back: no reuse of 1
    finally:
        stop(server, log, signum)
    assert len(read_archive(archive / "memory.rcarch.prev")[1]) == 3


@pytest.mark.timeout(120)
def test_a_damaged_archive_stops_the_server_before_it_serves_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    root, data, archive = tmp_path / "ws", tmp_path / "data", tmp_path / "archive"
    root.mkdir()
    archive.mkdir()
    damaged = b"RCARCH01 cut short"
    (archive / "memory.rcarch").write_bytes(damaged)
    cli = str(Path(sys.executable).parent / "repocontext")
    args = [cli, "serve", "--transport", "http", "--port", str(free_port())]
    args += ["--data-dir", str(data), "--workspace-root", str(root)]
    env = {**os.environ, "REPOCONTEXT_EMBEDDER": "off", "REPOCONTEXT_ARCHIVE_DIR": str(archive)}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 1, done.stderr
    assert "error [archive.corrupt]" in done.stderr
    assert "memory.rcarch.prev" in done.stderr  # the hint names the way out
    assert (archive / "memory.rcarch").read_bytes() == damaged
    assert sorted(p.name for p in archive.iterdir()) == ["memory.rcarch"]
    with Store.open(data, read_only=True) as store:
        assert not store.scan(MEMORY, "", include_deleted=True).records
