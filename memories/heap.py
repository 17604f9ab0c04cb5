"""Giving freed memory back to the system.

glibc's allocator keeps what a process frees in its arenas (one per thread that allocated, up
to eight per CPU) for the next allocation, and gives little of it back: a web process that
embedded a few bulk writes in several threads stayed hundreds of megabytes larger than it
needed to, and grew with each new high-water mark (``benchmarks/memory.py``; in a process
embedding from 8 threads, 722 MB rising to 1,112 MB over 8 rounds, against 216 to 240 MB with a
trim after each embedding). ``give_back`` asks glibc to return the free pages of every arena
(``malloc_trim(0)``), a few milliseconds; elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _trim():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def give_back() -> bool:
    """Return the free memory of every malloc arena to the system; False where that cannot be
    asked (not glibc)."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
