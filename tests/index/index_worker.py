"""Child process for the resumability test: index a repository in the foreground."""

import sys
from pathlib import Path

from repocontext.settings import Settings
from repocontext.workspace import Workspace


def main(data_dir: str, root: str) -> None:
    settings = Settings(data_dir=Path(data_dir), workspace_root=Path(root).parent)

    def report(progress, done, total):
        if progress.files_read:
            print(f"READ {progress.files_read}", flush=True)

    with Workspace.open(settings) as workspace:
        workspace.bootstrap(Path(root), background=False, on_progress=report)
    print("DONE", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
