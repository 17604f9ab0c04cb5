"""The web process's allocator settings (``memories.heap.configure``), each in a new process
(they hold for the life of one)."""

import json
import os
import platform
import subprocess
import sys

import pytest

#: In a new process: allocate and free a block of 1 MB three times, and print, each time, the
#: megabytes glibc had mapped on their own (``mallinfo2().hblkhd``) while the block was held.
PROBE = """
import ctypes, sys
from memories.heap import configure
if sys.argv[1] == "configured":
    configure()
elif sys.argv[1] == "web":
    import meaning_memory.asgi  # what uvicorn imports
FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS.split()]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
mapped = []
for _ in range(3):
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(1 << 20)
    mapped.append((libc.mallinfo2().hblkhd - before) >> 20)
    libc.free(block)
print(mapped)
"""


def mapped_megabytes(mode: str) -> list[int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, mode], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


#: Without glibc there is no ``mallopt`` to call (``configure`` does nothing there).
glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="not glibc")


@glibc_only
def test_a_freed_large_block_does_not_move_the_next_ones_into_the_arenas():
    """glibc raises its mmap threshold when a mapped block is freed: the next block of that
    size comes from an arena, where buffers of that size leave holes. Configured, every block
    of 1 MB is mapped on its own and given back when freed."""
    assert mapped_megabytes("default") == [1, 0, 0]
    assert mapped_megabytes("configured") == [1, 1, 1]


@glibc_only
def test_the_web_process_configures_the_allocator():
    assert mapped_megabytes("web") == [1, 1, 1]
