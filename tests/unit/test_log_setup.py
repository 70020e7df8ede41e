"""tools/log_setup.py: the one log format, one line per record, uvicorn's lifecycle lines once per process."""

from __future__ import annotations

import logging
import re
import sys

from tests.support.repository import PROJECT_ROOT
from tools.log_setup import LifecycleOnce, OneLineFormatter

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) [\w.]+: ")


def record(message: str, level: int = logging.INFO, name: str = "ol2purview.host", exc_info=None) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, (), exc_info)


def test_a_multi_line_message_and_its_traceback_stay_on_one_line():
    try:
        raise ValueError("bad value\nsecond line of the error")
    except ValueError:
        text = OneLineFormatter().format(record("could not write\nthe run", logging.ERROR, exc_info=sys.exc_info()))
    assert "\n" not in text and LINE.match(text), text
    assert text.split(": ", 1)[1].startswith("could not write | the run | Traceback (most recent call last): | ")
    assert text.endswith(" | ValueError: bad value | second line of the error")


def test_uvicorn_lifecycle_lines_pass_once_and_everything_else_always():
    once = LifecycleOnce()
    messages = [
        "Started server process [7]",
        "Shutting down",
        "Finished server process [7]",
        "Shutting down",
        "Finished server process [7]",
        "Started server process [7]",
        "Invalid HTTP request received.",
        "Invalid HTTP request received.",
    ]
    assert [m for m in messages if once.filter(record(m, name="uvicorn.error"))] == [
        "Started server process [7]",
        "Shutting down",
        "Finished server process [7]",
        "Invalid HTTP request received.",
        "Invalid HTTP request received.",
    ]


def test_every_tool_that_configures_logging_uses_the_shared_setup():
    """No component keeps a format of its own: basicConfig and uvicorn's default log config appear nowhere else."""
    sources = [
        PROJECT_ROOT / "function_app.py",
        *sorted((PROJECT_ROOT / "tools").rglob("*.py")),
        *sorted((PROJECT_ROOT / "olparser").rglob("*.py")),
    ]
    code = {path.relative_to(PROJECT_ROOT).as_posix(): path.read_text(encoding="utf-8") for path in sources}
    assert [path for path, text in code.items() if "basicConfig(" in text] == ["tools/log_setup.py"]
    uvicorn_configs = [
        path for path, text in code.items() if "uvicorn.Config(" in text and path != "tools/log_setup.py"
    ]
    assert uvicorn_configs == ["tools/catalog/server.py", "tools/functions_host/cli.py"]
    for path in uvicorn_configs:
        assert code[path].count("uvicorn.Config(") == code[path].count("log_config=UVICORN_LOG_CONFIG"), path
