"""One exit-code convention for every command (`ol2purview ...`, `qn-tester`), documented in
docs/guides/troubleshooting.md ("Exit codes") and in `ol2purview --help`.

- 0 `OK`: done (for `replay`: every event accepted);
- 1 `FAILED`: the work could not be done: an endpoint or catalog refused it (a wrong key, 403, 5xx, an event refused)
  or could not be reached, or it failed on the way;
- 2 `USAGE`: the command line: an option or value that cannot be used (the endpoint's 400 naming a parameter
  included), a file it names that cannot be read, nothing to talk to (no `serve` running and no `--url`), or nothing
  found for what was asked (a dataset the catalog or the history does not hold: 404);
- 3 `NO_MATCH`: `qn-tester` only: no mapping rule matched (1 is its lint findings).

What a shell reports for a signal: 141 `READER_GONE` when the reader of the output went away (`... | head`, SIGPIPE),
130 `INTERRUPTED` on Ctrl-C. No traceback reaches a user: an error no command expected is one line and exit 1
(`OL2PURVIEW_TRACEBACK=1` shows the traceback).
"""

from __future__ import annotations

OK, FAILED, USAGE, NO_MATCH = 0, 1, 2, 3
READER_GONE, INTERRUPTED = 141, 130  # 128 + SIGPIPE, 128 + SIGINT
TRACEBACK_SETTING = "OL2PURVIEW_TRACEBACK"
CONVENTION = (
    "exit codes: 0 done; 1 the work failed (refused, e.g. a wrong key, or unreachable); 2 usage (bad "
    "arguments, no serve to talk to, nothing found); qn-tester: 3 no rule matched, 1 lint findings"
)


def for_http_status(status: int) -> int:
    """The exit code of a command whose request was answered with `status` (not 2xx): a parameter refused (400) or
    nothing found (404) is USAGE; anything else (401, 403, 5xx) is FAILED."""
    return USAGE if status in (400, 404) else FAILED


def one_line(exc: BaseException) -> str:
    """An exception as one line a user can read: its type and the first line of its text."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__
