"""The export file's name and version, its record types, vectors and times as text, and how
a value is shown in an error."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import numpy as np
from django.utils.dateparse import parse_datetime

FORMAT = "meaning-memory-export"
FORMAT_VERSION = 1
RECORD_TYPES = ("scope", "agent", "entity", "memory", "link", "thread", "divergence")


def encode_vector(vector: Any) -> str | None:
    """A vector as base64 of its float32 values, little-endian: exact, and a third the size
    of decimal text."""
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)


def parse_time(value: str | None) -> datetime | None:
    return None if value is None else parse_datetime(value)


#: The longest line an import reads (in bytes, its newline included): far more than the longest
#: record an export writes (a memory of ``MM_MAX_TEXT_CHARS`` with its episode, metadata,
#: vectors and history), so that a line of any length is refused after reading this much.
LINE_MAX_BYTES = 16 * 1024 * 1024


def shown(value: Any) -> str:
    """A value of a file as a message shows it: short, and a list or an object by its kind (a
    value nested thousands deep has no repr)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}… ({len(text):,} characters)"
