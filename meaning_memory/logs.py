"""Logging of the engine's processes."""

from __future__ import annotations

import logging


class DatabaseAwayInOneLine(logging.Filter):
    """An error logged with a traceback because the database was away (restarting, unreachable,
    out of connections) becomes one line: the traceback says nothing an operator can act on,
    and a restart of PostgreSQL would otherwise fill the log with them (the background
    worker's broker logs each failed poll)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            from memories.database_errors import unavailable

            exc = record.exc_info[1]
            if unavailable(exc) is not None:
                reason = (
                    str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                )
                record.msg = f"{record.getMessage()}: {reason}"
                record.args = ()
                record.exc_info = None
                record.exc_text = None
        return True
