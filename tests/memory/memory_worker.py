"""A separate process writing memory entries (run by test_concurrency.py).

Usage: memory_worker.py DATA_DIR WORKER_INDEX ROUNDS
"""

import sys
from pathlib import Path

from repocontext.settings import Settings
from repocontext.store.keys import mem_key
from repocontext.workspace import Workspace

ENTRIES = 4


def main() -> None:
    data, me, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    settings = Settings(data_dir=data, embedder="off", reconcile="off")
    with Workspace.open(settings) as workspace:
        for r in range(rounds):
            for e in range(ENTRIES):
                key = mem_key("demo", "shared", f"e{e}")
                tag = f"w{me}-r{r}"
                link = {"related": [mem_key("demo", "targets", f"w{me}-r{r}")]}
                if r % 2:
                    workspace.update(
                        key, fields={"author": f"w{me}"}, add_tags=[tag], add_links=link
                    )
                else:
                    workspace.remember(
                        "demo",
                        "shared",
                        entry_id=f"e{e}",
                        body=f"w{me} r{r}",
                        tags=[tag],
                        add_links=link,
                    )


if __name__ == "__main__":
    main()
