"""Import references, outlines and files the link tests build in-memory repositories from."""

from repocontext.index.links.repo_files import RepoFiles
from repocontext.index.links.resolve import resolve_imports
from repocontext.index.model import FileOutline, ImportRef


def imp(spec: str, kind: str, *names: str, level: int = 0, system: bool = False) -> ImportRef:
    return ImportRef(spec=spec, kind=kind, line=1, level=level, names=names, system=system)


def outline(language: str, *imports: ImportRef, refs: tuple[str, ...] = ()) -> FileOutline:
    return FileOutline(language=language, imports=imports, references=refs)


def resolved(path: str, out: FileOutline, files: RepoFiles) -> dict[str, str]:
    return {link.target: link.reason for link in resolve_imports(path, out, files)}


# C# files and their namespaces (import resolution, and namespace-wide imports in coverage)
CS_PACKAGES = {
    "Acme.Core/Parser.cs": "Acme.Core",
    "Acme.Core/Lexer.cs": "Acme.Core",
    "Acme.Core/Text/Rope.cs": "Acme.Core.Text",
    "Acme.App/Program.cs": "Acme.App",
}
