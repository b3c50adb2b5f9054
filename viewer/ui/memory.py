"""Hand the memory a finished background job freed back to the system.

glibc keeps what a thread frees in that thread's malloc arena for later use: after a
10^6-event log loads, the window holds ~130 MB resident where its tables need ~40 MB
(the scanner's threads and the pairing's temporaries).  ``malloc_trim(0)`` returns
the free pages of every arena in a few milliseconds.  Elsewhere it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import sys


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library or system)."""
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
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
