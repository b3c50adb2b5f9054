"""The C heap (glibc's malloc) under the reader's threads: one arena for all of them, and
the memory a finished background job freed handed back to the system.

glibc keeps what a thread frees in that thread's malloc arena for later use, and gives
each thread that allocates under contention an arena of its own.  The scanner's threads
free ~60 MB of a 10^6-event log's pieces in their arenas, where the pairing on the main
thread, which needs as much next, cannot reuse it: ``one_arena`` makes every thread
allocate from one (the load's peak 168 -> 151-159 MB above the interpreter, and no
slower: the pairing reuses pages already faulted in).  After a load, the window holds
~130 MB resident where its tables need ~40 MB; ``release_free_memory`` (``malloc_trim``)
returns the free pages in a few milliseconds.  Elsewhere both do nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import sys

#: ``mallopt``'s parameter for the most arenas (glibc's malloc.h).
M_ARENA_MAX = -8


@functools.cache
def _libc():
    """glibc, or None (another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError):
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    return None


def one_arena() -> bool:
    """Have every thread allocate from one malloc arena, unless ``MALLOC_ARENA_MAX`` is
    set (the user's choice is kept); True where glibc took it.  Call it before threads
    start: arenas made before stay."""
    libc = _libc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = libc.mallopt  # glibc only
    except AttributeError:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt(M_ARENA_MAX, 1) == 1


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library or system)."""
    libc = _libc()
    if libc is None:
        return None
    with contextlib.suppress(AttributeError):
        trim = libc.malloc_trim  # glibc only: musl has no such function
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int
        return trim
    return None


def release_free_memory() -> bool:
    """Return freed heap pages to the system; True where that could be asked."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
