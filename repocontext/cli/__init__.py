"""The ``repocontext`` command line."""

from repocontext.cli.app import app, build_settings, main

__all__ = ["app", "build_settings", "main"]
