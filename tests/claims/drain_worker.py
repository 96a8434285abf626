"""A backlog worker that drains a topic through a running MCP server (streamable HTTP).

Usage: drain_worker.py URL NAME STALL_EVERY

Loops: claim_next, "work", write the result with status done and the fencing token, release.
Every STALL_EVERY-th item it stalls past its lease, so another worker takes the item over and
this worker's late write must be refused. Prints one JSON line of counters when the backlog
is empty.
"""

import asyncio
import json
import random
import sys

from mcp import Client

LEASE = 1.0


async def main() -> None:
    url, name, stall_every = sys.argv[1], sys.argv[2], int(sys.argv[3])
    counts = {"worker": name, "claims": 0, "done": 0, "refused": 0, "superseded": 0}
    rng = random.Random(name)
    async with Client(url) as client:
        while True:
            got = (
                await client.call_tool(
                    "repocontext_claim_next",
                    {"repoId": "proj", "topic": "backlog", "owner": name, "leaseSeconds": LEASE},
                )
            ).structured_content
            if not got["granted"]:
                if got["reason"] == "empty":
                    break
                continue
            counts["claims"] += 1
            key, token = got["key"], got["fencingToken"]
            print(json.dumps({"claimed": key, "token": token}), flush=True)
            stall = stall_every and counts["claims"] % stall_every == 0
            await asyncio.sleep(LEASE * 2.5 if stall else rng.random() * 0.01)
            written = await client.call_tool(
                "repocontext_update",
                {
                    "key": key,
                    "fields": {"status": "done", "body": f"by {name} token {token}"},
                    "fencingToken": token,
                },
            )
            if written.is_error:
                code = json.loads(written.content[0].text)["code"]
                assert code == "claim.stale_token", code
                counts["refused"] += 1
                continue
            counts["done"] += 1
            await client.call_tool("repocontext_release_claim", {"key": key, "fencingToken": token})
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
