"""The reader's scanner, chosen once: the compiled one (``compiled``) when it is built,
else the pure-Python one (``pure``); ``CUZK_PURE_PYTHON=1`` in the environment chooses the
pure-Python one.  Both give the same batches (the differential tests hold them equal);
everything in ``viewer.io`` scans through the functions here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType

import numpy as np

from viewer.io import pure
from viewer.io.batch import EventBatch
from viewer.io.records import JobIds, Ordinals
from viewer.io.source import Chunk, Skip

__all__ = [
    "BACKEND",
    "Ordinals",
    "compiled",
    "iter_chunks",
    "iter_range",
    "match_blocks",
    "pack_sorted",
]


def _choose() -> ModuleType:
    if os.environ.get("CUZK_PURE_PYTHON"):
        return pure
    try:
        from viewer.io import compiled as backend
    except ImportError:  # no compiler when installed: the pure-Python scanner does the work
        return pure
    return backend


#: The scanner in use (the tests may swap it for the other one).
BACKEND: ModuleType = _choose()


def compiled() -> bool:
    """True when the compiled scanner is in use."""
    return BACKEND.NAME == "compiled"


def iter_chunks(
    chunks: Iterable[Chunk | Skip], ords: Ordinals, jobs: JobIds
) -> Iterator[EventBatch]:
    """The events of ``(buffer, start, end)`` chunks of whole lines (a decompressed
    stream), in order, and the lines the chunks' cutter skipped, each batch as soon as it
    is scanned."""
    return BACKEND.iter_chunks(chunks, ords, jobs)


def iter_range(
    fd: int,
    lo: int,
    hi: int,
    ords: Ordinals,
    jobs: JobIds,
    progress: Callable[[int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Iterator[EventBatch]:
    """The events of the bytes ``[lo, hi)`` of the plain file ``fd`` (``lo`` a line start),
    each batch as soon as it is scanned (a few pieces ahead at most); a last line without a
    line end counts, unless the file ends before ``hi``.  ``progress(offset)`` now and then;
    ``cancel()`` is checked between pieces."""
    return BACKEND.iter_range(fd, lo, hi, ords, jobs, progress, cancel)


def match_blocks(*args: np.ndarray | list[np.ndarray] | float) -> tuple[np.ndarray, int]:
    """The pass of ``timing._match`` over the blocks (see ``pure.match_blocks``)."""
    return BACKEND.match_blocks(*args)


def pack_sorted(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The greedy pass of ``analysis.packing.pack_rows`` (see ``pure.pack_sorted``)."""
    return BACKEND.pack_sorted(start, end)
