"""The C heap (glibc's malloc) under the reader's threads: one arena for all of them, and
the memory a finished background job freed handed back to the system.

glibc keeps what a thread frees in that thread's malloc arena for later use, and gives
each thread that allocates under contention an arena of its own.  The scanner's threads
free ~60 MB of a 10^6-event log's pieces in their arenas, where the pairing on the main
thread, which needs as much next, cannot reuse it: ``one_arena`` makes every thread
allocate from one (the load's peak 168 -> 151-159 MB above the interpreter, and no
slower: the pairing reuses pages already faulted in).  After a load, the window holds
~130 MB resident where its tables need ~40 MB; ``release_free_memory`` (``malloc_trim``)
returns the free pages in a few milliseconds.  ``reuse_big_blocks`` keeps the blocks a
read frees (up to 4 MB) in the heap for the next piece, rather than mapped and zeroed
afresh each time.  Elsewhere all of them do nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys

#: ``mallopt``'s parameters (glibc's malloc.h): the heap's free top kept, the smallest
#: block mapped on its own, the most arenas.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8
#: Blocks up to this size come from the heap; bigger ones are mapped on their own (with
#: 32 MB, the pure-Python scanner's blocks of a log of 50 MB lines fragmented the heap:
#: peak 75 -> 112 MB).
BIG_BLOCK = 4 << 20
#: Free memory kept at the heap's top for the next blocks (a piece's worth).
KEPT_FREE = 32 << 20
#: The environment variables by which a user sets those thresholds (kept when set), and the
#: tunables of ``GLIBC_TUNABLES`` that set them.
_THRESHOLD_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
_THRESHOLD_TUNABLES = ("glibc.malloc.mmap_threshold", "glibc.malloc.trim_threshold")


def _threshold_chosen() -> bool:
    """Whether the user set either threshold (another tunable alone does not count)."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    return any(name in os.environ for name in _THRESHOLD_SETTINGS) or any(
        t in tunables for t in _THRESHOLD_TUNABLES
    )


@functools.cache
def _libc():
    """glibc, or None (another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError):
        return ctypes.CDLL("libc.so.6")  # glibc's name on every Linux it runs on
    from ctypes.util import find_library  # ~8 ms: only for a C library by another name

    with contextlib.suppress(OSError):
        name = find_library("c")
        return ctypes.CDLL(name) if name else None
    return None


@functools.cache
def _mallopt():
    """glibc's ``mallopt``, or None (another C library or system)."""
    return _libc_function("mallopt", [ctypes.c_int, ctypes.c_int])


def one_arena() -> bool:
    """Have every thread allocate from one malloc arena, unless ``MALLOC_ARENA_MAX`` is
    set (the user's choice is kept); True where glibc took it.  Call it before threads
    start: arenas made before stay."""
    mallopt = _mallopt()
    if mallopt is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return mallopt(M_ARENA_MAX, 1) == 1


def reuse_big_blocks() -> bool:
    """Serve blocks up to BIG_BLOCK from the heap, reused once freed (KEPT_FREE of it kept
    at its top), unless the user set a malloc threshold; True where glibc took it.

    glibc maps a block over its threshold (128 KB at first, raised only as mapped blocks
    are freed) on its own, and gives its pages back when it is freed: the next block of
    that size is mapped again, and the kernel zeroes each of its pages at first touch.
    The reader's pieces and their numpy temporaries (0.1-4 MB each, freed a piece later)
    went that way: 73 000 page faults in a report of the 10^6-event log, 62 000 with
    this, and ~4 % of its time (issue 15: the report against grep).  Blocks a finished
    job freed still go back with ``release_free_memory``."""
    mallopt = _mallopt()
    if mallopt is None or _threshold_chosen():
        return False
    return mallopt(M_MMAP_THRESHOLD, BIG_BLOCK) == 1 and mallopt(M_TRIM_THRESHOLD, KEPT_FREE) == 1


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library or system)."""
    return _libc_function("malloc_trim", [ctypes.c_size_t])


def _libc_function(name: str, argtypes: list):
    """glibc's function ``name`` (taking ``argtypes``, returning an int), or None: another
    C library (musl has neither ``mallopt`` nor ``malloc_trim``) or system."""
    libc = _libc()
    if libc is None:
        return None
    with contextlib.suppress(AttributeError):
        function = getattr(libc, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int
        return function
    return None


def release_free_memory() -> bool:
    """Return freed heap pages to the system; True where that could be asked."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
