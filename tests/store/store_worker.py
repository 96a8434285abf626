"""Child-process workloads for the concurrency and crash tests (run as a script)."""

import sys
from pathlib import Path

from repocontext.store import MEMORY, STRUCTURAL, DocPatch, Store
from repocontext.store.keys import file_key, mem_key


def open_store(target: str, **options: int) -> Store:
    """Open the store ``target`` names: a data directory, or a PostgreSQL store URL."""
    if "://" in target:
        return Store.open(Path("."), store_url=target)
    return Store.open(Path(target), **options)


def fields(data_dir: str, worker: str, records: str, pad: str = "0") -> None:
    """Write field ``w{worker}`` and tag ``t{worker}`` into every shared record.

    With ``pad`` > 0 each worker also writes padding records into a 1 MiB map, so the
    processes grow the map under each other.
    """
    map_bytes = 1 << 20 if int(pad) else 256 << 20
    with open_store(data_dir, map_bytes=map_bytes) as store:
        for i in range(int(records)):
            patch = DocPatch(set_fields={f"w{worker}": i}, add={"tags": [f"t{worker}"]})
            store.merge_fields(MEMORY, mem_key("r", "shared", f"e{i}"), patch)
            if int(pad):
                store.put(STRUCTURAL, file_key("r", f"pad/{worker}/{i}"), "x" * int(pad))
    print("done", flush=True)


def batches(data_dir: str, commit_every: str) -> None:
    """Write forever in batches, printing every acknowledged key range."""
    with open_store(data_dir) as store:

        def acknowledged(keys: list[str]) -> None:
            print(f"ACK {keys[0]} {keys[-1]} {len(keys)}", flush=True)

        with store.batch(commit_every=int(commit_every), on_commit=acknowledged) as batch:
            i = 0
            while True:
                batch.put(STRUCTURAL, file_key("r", f"f{i:08}"), {"i": i, "pad": "x" * 200})
                i += 1


def claims(target: str, worker: str, rounds: str, key: str) -> None:
    """Claim ``key`` ``rounds`` times (waiting in line), write with the token, release it.

    Prints ``TOKEN n`` for every token granted, once the fenced write with it has landed.
    """
    from repocontext.claims import ClaimService
    from repocontext.memory import MemoryService

    with open_store(target) as store:
        memory, service = MemoryService(store), ClaimService(store)
        for i in range(int(rounds)):
            got = service.claim(key, f"w{worker}", lease_seconds=60, max_wait_seconds=120)
            token = got.fencing_token
            assert token is not None, got
            memory.update(key, fields={"body": f"w{worker} {i} token {token}"}, fencing_token=token)
            print(f"TOKEN {token}", flush=True)
            service.release(key, token)
    print("done", flush=True)


if __name__ == "__main__":
    {"fields": fields, "batches": batches, "claims": claims}[sys.argv[1]](*sys.argv[2:])
