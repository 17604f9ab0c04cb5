"""The export file's format (``meaning-memory export`` / ``import``): its name and version,
vectors as text, and each record's rules, checked for every line before an import writes
anything. The records are written by ``selectors.export`` and read by ``services.transfer``."""

from memories.exchange.format import (
    FORMAT,
    FORMAT_VERSION,
    LINE_MAX_BYTES,
    RECORD_TYPES,
    decode_vector,
    encode_vector,
    parse_time,
    shown,
)
from memories.exchange.records import OPTIONAL, RECORDS, record_problems

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LINE_MAX_BYTES",
    "OPTIONAL",
    "RECORDS",
    "RECORD_TYPES",
    "decode_vector",
    "encode_vector",
    "parse_time",
    "record_problems",
    "shown",
]
