"""A backlog worker that drains a topic through one of several servers sharing one store.

Usage: failover_drain_worker.py URL[,URL...] NAME STALL_EVERY

Like ``drain_worker.py``, but it starts on the first URL and moves to the next one when its
server stops answering (killed mid-drain). An item it held when that happened is finished
through the next server with the same fencing token: either the write lands (the lease still
holds) or it is refused as stale (another worker took the item over meanwhile).

Prints one JSON line per claim (``claimed``), and at the end one JSON line of counters with
every write the server acknowledged (``acked``: key -> body).
"""

import asyncio
import json
import random
import sys

from mcp import Client

LEASE = 1.0


class Drain:
    """The worker's state, kept across servers."""

    def __init__(self, name: str, stall_every: int) -> None:
        self.name = name
        self.stall_every = stall_every
        self.rng = random.Random(name)
        self.counts = {"worker": name, "claims": 0, "done": 0, "refused": 0, "failovers": 0}
        self.acked: dict[str, str] = {}
        self.held: tuple[str, int] | None = None  # claimed, not yet written

    async def run(self, client: Client) -> None:
        """Drain through ``client`` until the backlog is empty (raises when the server dies)."""
        while True:
            if self.held is None:
                got = (
                    await client.call_tool(
                        "repocontext_claim_next",
                        {
                            "repoId": "proj",
                            "topic": "backlog",
                            "owner": self.name,
                            "leaseSeconds": LEASE,
                        },
                    )
                ).structured_content
                if not got["granted"]:
                    if got["reason"] == "empty":
                        return
                    continue
                self.counts["claims"] += 1
                self.held = (got["key"], got["fencingToken"])
                print(json.dumps({"claimed": got["key"], "token": got["fencingToken"]}), flush=True)
                stall = self.stall_every and self.counts["claims"] % self.stall_every == 0
                await asyncio.sleep(LEASE * 2.5 if stall else self.rng.random() * 0.01)
            await self._finish(client)

    async def _finish(self, client: Client) -> None:
        assert self.held is not None
        key, token = self.held
        body = f"by {self.name} token {token}"
        written = await client.call_tool(
            "repocontext_update",
            {"key": key, "fields": {"status": "done", "body": body}, "fencingToken": token},
        )
        self.held = None
        if written.is_error:
            code = json.loads(written.content[0].text)["code"]
            assert code == "claim.stale_token", code
            self.counts["refused"] += 1
            return
        self.counts["done"] += 1
        self.acked[key] = body
        await client.call_tool("repocontext_release_claim", {"key": key, "fencingToken": token})


async def main() -> None:
    urls, name, stall_every = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
    drain = Drain(name, stall_every)
    for attempt in range(len(urls) * 3):
        try:
            async with Client(urls[attempt % len(urls)]) as client:
                await drain.run(client)
            break
        except Exception:  # the server went away (connection refused or reset): next one
            drain.counts["failovers"] += 1
    else:
        raise SystemExit("no server answered")
    print(json.dumps({**drain.counts, "acked": drain.acked}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
