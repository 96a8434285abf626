"""A local HTTP server on 127.0.0.1 that speaks a provider's wire format, for the provider tests.

The server records every request (path, headers, JSON body) and answers each with the next
:class:`Reply` its ``answer`` callable returns. ``fixture_agent`` plays the model on the
reset-token-py fixture: it reads the turn's prompt from the request and answers with a context
request first, then the fixture's patch on the handle the prompt shows for the service file.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lattice_runtime.compile import compile_task
from lattice_runtime.protocol import PromptInput, render_prompt
from lattice_runtime.workers import WorkerTurn
from tests.lattice_runtime.fixture_repos import PY_GOAL, fixture_script

SERVICE_PATH = "src/resetkit/service.py"


@dataclass
class Reply:
    status: int
    body: object
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Answer = Callable[[Recorded, int], Reply]


@dataclass
class FakeProvider:
    answer: Answer
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(fake: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            recorded = Recorded(self.path, headers, body)
            fake.requests.append(recorded)
            reply = fake.answer(recorded, len(fake.requests))
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def fake_provider(answer: Answer) -> Iterator[FakeProvider]:
    fake = FakeProvider(answer)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fixture_patch(prompt: str) -> dict[str, object]:
    """The fixture's scripted patch, on the handle the prompt shows for the service file."""
    match = re.search(
        rf"path: {re.escape(SERVICE_PATH)}\nlines: [^\n]*\nsymbol: [^\n]*\nhandle: (E\d+)\n", prompt
    )
    assert match, "the prompt shows no page of the service file"
    patch = json.loads(json.dumps(fixture_script()[0]))
    patch["patch"]["changes"][0]["editHandle"] = match[1]
    return patch


CONTEXT_REQUEST: dict[str, object] = {
    "kind": "context_request",
    "requests": [
        {"reason": "the token store", "pathHint": "src/resetkit/tokens.py", "symbol": None}
    ],
}


def fixture_agent(prompt: str, number: int) -> dict[str, object]:
    """Turn 1: a context request (with a null symbol, as strict schemas force); then the patch."""
    return CONTEXT_REQUEST if number == 1 else fixture_patch(prompt)


def sample_turn(repo: Path) -> WorkerTurn:
    """An initial turn of the fixture task, rendered by the runtime's own renderer."""
    task = compile_task(PY_GOAL, repo)
    prompt = render_prompt(PromptInput(task, "initial", (), "", None, 3, 3))
    return WorkerTurn(1, "initial", prompt, task, ())


ANTHROPIC_LIMITS = {
    "anthropic-ratelimit-requests-limit": "1000",
    "anthropic-ratelimit-requests-remaining": "900",
    "anthropic-ratelimit-input-tokens-limit": "400000",
    "anthropic-ratelimit-input-tokens-remaining": "300000",
    "anthropic-ratelimit-output-tokens-limit": "80000",
    "anthropic-ratelimit-output-tokens-remaining": "79000",
}
"""Used shares 10, 25 and 1.25: the window usage is 25."""

OPENAI_LIMITS = {
    "x-ratelimit-limit-requests": "500",
    "x-ratelimit-remaining-requests": "480",
    "x-ratelimit-limit-tokens": "200000",
    "x-ratelimit-remaining-tokens": "140000",
}
"""Used shares 4 and 30: the window usage is 30."""

ERROR_BODY = {"type": "error", "error": {"type": "api_error", "message": "boom from the fake"}}
