"""Server logs: one format (JSON lines off a terminal), uvicorn included, whole tracebacks."""

import io
import json
import logging
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from repocontext.telemetry import JsonLineFormatter, ReadableFormatter, configure_logging
from repocontext.testing import start_http_server

_LONG = "a message that goes on " * 20  # far past 80 columns: never wrapped


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """Put the root and uvicorn loggers back as they were (configure_logging changes them)."""
    root = logging.getLogger()
    names = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
    saved = [(logging.getLogger(n), logging.getLogger(n).handlers[:]) for n in names]
    propagate = {logger: logger.propagate for logger, _ in saved}
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for logger, kept in saved:
        logger.handlers[:] = kept
        logger.propagate = propagate[logger]


def _deep_failure(depth: int) -> None:
    if depth == 0:
        raise ValueError("innermost failure")
    _deep_failure(depth - 1)


def _failed_record() -> logging.LogRecord:
    try:
        _deep_failure(30)
    except ValueError:
        logger = logging.getLogger("repocontext.test")
        return logger.makeRecord(
            logger.name, logging.ERROR, __file__, 1, _LONG, (), exc_info=_exc_info()
        )
    raise AssertionError("unreachable")


def _exc_info() -> tuple[type[BaseException], BaseException, object]:
    kind, value, trace = sys.exc_info()
    assert kind is not None and value is not None
    return kind, value, trace


def _python_traceback(record: logging.LogRecord) -> str:
    assert record.exc_info is not None
    return "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")


def test_a_json_line_carries_time_level_logger_message_and_the_whole_traceback() -> None:
    record = _failed_record()
    text = JsonLineFormatter().format(record)
    assert "\n" not in text  # one record, one line
    line = json.loads(text)
    assert (line["level"], line["logger"], line["message"]) == ("ERROR", "repocontext.test", _LONG)
    assert line["time"].endswith("Z") and "T" in line["time"]
    assert line["exc"] == _python_traceback(record)  # whole: nothing cut, wrapped or styled
    assert line["exc"].rstrip().endswith("ValueError: innermost failure")


def test_record_fields_become_keys_of_the_json_line_without_replacing_the_base_ones() -> None:
    record = logging.LogRecord("repocontext.access", logging.INFO, __file__, 1, "GET /", (), None)
    record.fields = {"path": "/mcp", "status": 200, "message": "not this one"}
    line = json.loads(JsonLineFormatter().format(record))
    assert (line["path"], line["status"], line["message"]) == ("/mcp", 200, "GET /")


def test_the_readable_format_keeps_long_messages_and_tracebacks_whole() -> None:
    record = _failed_record()
    text = ReadableFormatter().format(record)
    first, rest = text.split("\n", 1)
    assert first.endswith(f"ERROR repocontext.test: {_LONG}")
    assert rest == _python_traceback(record)


def test_configure_logging_writes_json_lines_off_a_terminal_for_uvicorn_too(
    restored_logging: None,
) -> None:
    stream = io.StringIO()
    configure_logging(stream)
    logging.getLogger("uvicorn.error").info("Uvicorn running")
    logging.getLogger("mcp.server").warning("from the SDK")
    try:
        _deep_failure(3)
    except ValueError:
        logging.getLogger("repocontext.x").exception("failed")
    lines = [json.loads(row) for row in stream.getvalue().splitlines()]
    assert [(line["logger"], line["message"]) for line in lines] == [
        ("uvicorn.error", "Uvicorn running"),
        ("mcp.server", "from the SDK"),
        ("repocontext.x", "failed"),
    ]
    assert "ValueError: innermost failure" in lines[2]["exc"]


def test_configure_logging_writes_readable_lines_on_a_terminal_and_replaces_itself(
    restored_logging: None,
) -> None:
    configure_logging(io.StringIO())
    terminal = _Tty()
    configure_logging(terminal)  # the second call replaces the first handler
    logging.getLogger("uvicorn.error").info("Uvicorn running")
    assert terminal.getvalue().endswith(" INFO uvicorn.error: Uvicorn running\n")
    ours = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    assert sum(isinstance(h.formatter, (JsonLineFormatter, ReadableFormatter)) for h in ours) == 1


@pytest.mark.timeout(120)
def test_a_served_process_writes_only_json_lines_besides_its_connect_banner(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    log = tmp_path / "server.log"
    server, base = start_http_server(tmp_path / "data", tmp_path / "ws", stderr=log)
    try:
        assert httpx2.get(f"{base}/health/ready", timeout=10).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
    rows = log.read_text().splitlines()
    banner = [row for row in rows if not row.startswith("{")]
    assert banner and all(
        row.startswith("repocontext MCP endpoint:") or row.startswith("  ") for row in banner
    )
    lines = [json.loads(row) for row in rows if row.startswith("{")]
    loggers = {line["logger"] for line in lines}
    assert {"uvicorn.error", "repocontext.access"} <= loggers
    [ready] = [line for line in lines if line.get("path") == "/health/ready"]
    assert (ready["level"], ready["status"], ready["method"]) == ("INFO", 200, "GET")
    assert any("Application shutdown complete" in line["message"] for line in lines)
