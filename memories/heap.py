"""Giving freed memory back to the system.

glibc's allocator keeps what a process frees in its arenas (one per thread that allocated, up
to eight per CPU) for the next allocation, and gives little of it back: a web process that
embedded a few bulk writes in several threads stayed hundreds of megabytes larger than it
needed to, and grew with each new high-water mark (``benchmarks/memory.py``; in a process
embedding from 8 threads, 722 MB rising to 1,112 MB over 8 rounds, against 216 to 240 MB with a
trim after each embedding). ``give_back`` asks glibc to return the free pages of every arena
(``malloc_trim(0)``), a few milliseconds; elsewhere than glibc it does nothing.

``configure`` (called once by the web process, before its threads start) sets two of glibc's
knobs the same way: at most ``ARENA_MAX`` arenas, so that the threads that run requests share
a few instead of scattering what they free over up to eight per CPU, and a fixed
``MMAP_THRESHOLD``: a block of that size or more is mapped on its own and unmapped when freed.
glibc otherwise raises that threshold each time it frees such a block (up to 32 MB), after
which the embedder's and the bulk writes' buffers of a few megabytes come from the arenas and
leave holes there. A variable of the environment (``MALLOC_ARENA_MAX``,
``MALLOC_MMAP_THRESHOLD_``) set by the operator wins over either.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

ARENA_MAX = 2
MMAP_THRESHOLD = 256 * 1024
#: glibc's ``mallopt`` parameters (malloc.h).
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


@functools.cache
def _libc_function(name: str):
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        return getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):  # not glibc
        return None


def configure() -> bool:
    """At most ``ARENA_MAX`` arenas and a fixed ``MMAP_THRESHOLD`` (see the module docstring),
    unless the environment sets them; False where that cannot be asked (not glibc)."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    if "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(_M_ARENA_MAX, ARENA_MAX)
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    return True


def give_back() -> bool:
    """Return the free memory of every malloc arena to the system; False where that cannot be
    asked (not glibc)."""
    trim = _libc_function("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True
