"""Java and C# package imports in a real repository: production code never links to tests.

A test file may declare its production package (Maven's ``src/test/java`` mirrors
``src/main/java``; a C# test project may reuse the production namespace). A non-test file's
wildcard import or ``using`` of that package must not reach the test, or the test would list
the production file as a dependent and editing it would report that file as impacted.
"""

from pathlib import Path

import pytest

from repocontext.index.files.walk import WalkOptions

MAVEN = {
    "pom.xml": "<project><artifactId>acme</artifactId></project>\n",
    "src/main/java/com/acme/app/Main.java": (
        "package com.acme.app;\n\nimport com.acme.model.*;\n\n"
        "public class Main {\n"
        "    public static void main(String[] args) { new Account().open(); }\n"
        "}\n"
    ),
    "src/main/java/com/acme/model/Account.java": (
        "package com.acme.model;\n\npublic class Account {\n    public void open() {}\n}\n"
    ),
    "src/test/java/com/acme/model/AccountTest.java": (
        "package com.acme.model;\n\n"
        "class AccountTest {\n    void opensAccounts() { new Account().open(); }\n}\n"
    ),
    "src/test/java/com/acme/app/MainTest.java": (
        "package com.acme.app;\n\nimport com.acme.model.*;\n\n"
        "class MainTest {\n    void startsMain() { Main.main(new String[0]); }\n}\n"
    ),
}

DOTNET = {
    "src/Acme.Model/Account.cs": (
        "namespace Acme.Model;\n\npublic class Account\n{\n    public void Open() {}\n}\n"
    ),
    "src/Acme.App/Program.cs": (
        "using Acme.Model;\n\nnamespace Acme.App;\n\n"
        "public static class Program\n{\n"
        "    public static void Main() { new Account().Open(); }\n"
        "}\n"
    ),
    "tests/Acme.Tests/AccountTests.cs": (
        "namespace Acme.Model;\n\n"
        "public class AccountTests\n{\n"
        "    public void OpensAccounts() { new Account().Open(); }\n"
        "}\n"
    ),
    "tests/Acme.Tests/ProgramTests.cs": (
        "using Acme.Model;\n\nnamespace Acme.App.Tests;\n\n"
        "public class ProgramTests\n{\n    public void StartsMain() { Program.Main(); }\n}\n"
    ),
}


def indexed(workspace, root: Path):
    status = workspace.bootstrap(root, options=WalkOptions(), background=False)
    assert status.status == "completed"
    return workspace


def paths(links) -> set[str]:
    return {link.path for link in links}


@pytest.mark.parametrize(
    ("name", "files", "production", "model", "model_test", "test_importer", "edit"),
    [
        (
            "maven",
            MAVEN,
            "src/main/java/com/acme/app/Main.java",
            "src/main/java/com/acme/model/Account.java",
            "src/test/java/com/acme/model/AccountTest.java",
            "src/test/java/com/acme/app/MainTest.java",
            ("open()", "open(); "),
        ),
        (
            "dotnet",
            DOTNET,
            "src/Acme.App/Program.cs",
            "src/Acme.Model/Account.cs",
            "tests/Acme.Tests/AccountTests.cs",
            "tests/Acme.Tests/ProgramTests.cs",
            ("Open();", "Open(); "),
        ),
    ],
)
def test_production_code_never_imports_a_test(
    workspace,
    repo_factory,
    tmp_path,
    name,
    files,
    production,
    model,
    model_test,
    test_importer,
    edit,
):
    root = repo_factory(tmp_path / "ws" / name, files)
    index = indexed(workspace, root)

    assert paths(index.related(name, production).imports) == {model}
    assert production not in paths(index.related(name, model_test).dependents)
    assert production in paths(index.related(name, model).dependents)
    # A test importing the package still sees the package's test files (helpers live there).
    assert paths(index.related(name, test_importer).imports) == {model, model_test}

    (root / model_test).write_text(files[model_test].replace(*edit))
    impacted = {item.path for item in index.changed(name).impacted}
    assert production not in impacted
