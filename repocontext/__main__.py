"""``python -m repocontext`` runs the ``repocontext`` command."""

from repocontext.cli import main

main()
