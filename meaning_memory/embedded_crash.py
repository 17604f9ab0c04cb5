"""What the embedded PostgreSQL's log (and, where readable, the kernel log) says when a server
process dies, as one message for a person: a process killed by SIGILL means the build uses
instructions this CPU does not have."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

from meaning_memory.embedded_setup import BUILD_DISTRIBUTION

#: How many of the log's last lines a message quotes.
LOG_TAIL_LINES = 12


#: A server process or the postmaster itself killed by a signal, as PostgreSQL logs it.
CRASH_LINE = re.compile(r"(terminated by signal (\d+)|was terminated by exception|PANIC:)")
_SIGNAL = re.compile(r"terminated by signal (\d+)(?::\s*([^\n]+))?")


def kernel_invalid_opcode_lines() -> list[str]:
    """The kernel log's invalid-opcode traps in postgres processes, where the kernel log is
    readable (it often is not, for a user other than root)."""
    try:
        out = subprocess.run(
            ["dmesg"], capture_output=True, text=True, timeout=3, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [
        line.strip() for line in out.splitlines() if "invalid opcode" in line and "postgres" in line
    ][-3:]


def signals_in(lines: list[str]) -> list[int]:
    """The signals that killed server processes, as the log lines report them."""
    return [int(m.group(1)) for line in lines if (m := _SIGNAL.search(line))]


def explain_crash(
    headline: str, *, log_lines: list[str], log_path: Path, kernel_lines: list[str]
) -> str:
    signals = signals_in(log_lines)
    parts = [headline]
    if int(signal.SIGILL) in signals or kernel_lines:
        parts.append(
            "A PostgreSQL server process was killed by SIGILL (illegal instruction): this "
            "PostgreSQL build does not fit this CPU (it uses instructions the processor does "
            "not have). Reinstall the requirements so that the embedded build is the one "
            f"pinned ({BUILD_DISTRIBUTION}), or set DATABASE_URL to a PostgreSQL with pgvector "
            "built for this machine; see docs/operations.md, 'The embedded database'."
        )
    elif signals:
        names = ", ".join(sorted({_signal_name(number) for number in signals}))
        parts.append(f"A PostgreSQL server process was killed by {names}.")
    if kernel_lines:
        parts.append("Kernel log:\n  " + "\n  ".join(kernel_lines))
    killed = [line for line in log_lines if _SIGNAL.search(line)][-3:]
    if killed:
        parts.append("Its log says:\n  " + "\n  ".join(killed))
    tail = [line for line in log_lines if line.strip() and line not in killed][-LOG_TAIL_LINES:]
    if tail:
        parts.append(f"Last lines of its log ({log_path}):\n  " + "\n  ".join(tail))
    else:
        parts.append(f"Its log ({log_path}) says nothing more.")
    return "\n".join(parts)


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} (signal {number})"
    except ValueError:
        return f"signal {number}"
