"""An export file's lines as records: each line read up to ``exchange.LINE_MAX_BYTES`` and no
further, decoded as UTF-8 and parsed as strict JSON (no NaN or Infinity, no number too large for
a float, no value nested deeper than the parser goes). What is wrong with a line is a message
naming it, never an exception: a file of any bytes is read to its end in bounded memory."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from memories.errors import ValidationFailed
from memories.exchange import LINE_MAX_BYTES

TOO_LONG = (
    f"longer than {LINE_MAX_BYTES:,} bytes, the longest line an export file may have: refused "
    "without reading the rest of it."
)
#: Read at a time.
CHUNK = 1024 * 1024


class _NotJSON(ValueError):
    """A value JSON has not (NaN, Infinity, a number too large for a float)."""


def _constant(name: str) -> float:
    raise _NotJSON(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJSON(f"{text[:20]} is too large a number")
    return value


def parse_line(data: bytes | bytearray) -> tuple[dict[str, Any] | None, str]:
    """One line's record, or None and what is wrong with it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start + 1} of the line)."
    if not text.strip():
        return None, ""
    try:
        record = json.loads(text, parse_constant=_constant, parse_float=_float)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at character {exc.pos + 1})."
    except RecursionError:
        return None, "not valid JSON here: nested too deep."
    except ValueError as exc:  # ours, or an integer of more digits than Python converts
        return None, f"not valid JSON here ({str(exc)[:80]})."
    if not isinstance(record, dict):
        return None, "must be a JSON object."
    return record, ""


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """The file's lines, blank ones skipped: each one's number, its record, and what is wrong
    when it has none. ValidationFailed when the file cannot be read at all."""
    try:
        lines = path.open("rb")
    except OSError as exc:
        raise ValidationFailed.single("file", f"cannot be read ({exc.strerror}).") from exc
    with lines:
        number = 0
        while True:
            try:
                data = _line(lines)
            except OSError as exc:
                raise ValidationFailed.single("file", f"cannot be read ({exc.strerror}).") from exc
            if not data:
                return
            number += 1
            if len(data) > LINE_MAX_BYTES:
                while data and not data.endswith(b"\n"):  # the rest of it, kept nowhere
                    data = lines.readline(CHUNK)
                yield number, None, TOO_LONG
                continue
            record, problem = parse_line(data)
            if record is not None or problem:
                yield number, record, problem


def _line(lines: BinaryIO) -> bytearray:
    """The next line, read a chunk at a time and no further than one byte past
    ``LINE_MAX_BYTES`` (held once: no chunk is copied twice)."""
    data = bytearray()
    while len(data) <= LINE_MAX_BYTES:
        part = lines.readline(min(CHUNK, LINE_MAX_BYTES + 1 - len(data)))
        data += part
        if not part or part.endswith(b"\n"):
            break
    return data
