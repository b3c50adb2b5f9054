"""The Timeline model: what one cuzk log says, as sorted numpy tables (``Frame``).

One ``Timeline`` per loaded file, holding one ``Session`` per daemon run.
Times are float64 milliseconds in the session's own epoch (the ``offset_ms``
of the TIMELINE lines); a missing time is NaN.  Tables are built once by the
reader and never mutated afterwards, so analysis and drawing can share them.

``Session.partitions`` has one row per GPU proving call (a partition of a
partitioned job, or a whole monolithic job), sorted by ``gpu_start`` (rows
that never reached the GPU last), with the columns in ``PARTITION_COLUMNS``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from viewer.model.facts import NOTHING, Facts
from viewer.model.frame import Frame, empty_like
from viewer.model.keys import TEXT

KERNEL_SOURCE_TIMING = "cuzk_timing"
KERNEL_SOURCE_GPU_MS = "gpu_ms"
#: Skip reasons of CUZK_TIMING lines; every other reason counts a TIMELINE-looking line.
CUZK_SKIP_REASONS = frozenset({"malformed_cuzk_timing", "orphan_cuzk_timing", "cuzk_timing_misfit"})

#: Column name -> dtype of ``Session.partitions``.
PARTITION_COLUMNS: dict[str, str] = {
    "job": "int32",  # index into Session.jobs (row position)
    "partition": "int32",  # partition number; -1 for a monolithic job
    "synth_start": "float64",
    "synth_end": "float64",
    "synth_ms": "float64",  # as reported by SYNTH_END (NaN when absent)
    "queued": "float64",  # CHAN_SEND / GPU_QUEUE
    "pickup": "float64",  # GPU_PICKUP
    "gpu_start": "float64",  # GPU_START
    "gpu_end": "float64",  # GPU_END; NaN while open
    "gpu_ms": "float64",  # as reported by GPU_END
    "worker": "int32",  # GPU worker id; -1 unknown
    "gpu": "int32",  # GPU ordinal; -1 unknown
    "kernel_start": "float64",  # start of the CUDA region (from CUZK_TIMING)
    "kernel_ms": "float64",  # gpu_total_ms of the attributed block
    "ntt_msm_h_ms": "float64",
    "batch_add_ms": "float64",
    "tail_msm_ms": "float64",
    # The other CUZK_TIMING figures of the call (see domain.md), NaN when absent.
    "prep_msm_ms": "float64",
    "pre_lock_cpu_ms": "float64",  # GPU_START -> at the kernel mutex (CPU prep)
    "mutex_wait_ms": "float64",
    "barrier_wait_ms": "float64",
    "mutex_held_ms": "float64",
    "total_start_fn_ms": "float64",
    "b_g2_msm_ms": "float64",
    "num_circuits": "float64",
    "gpu_open": "bool",  # GPU_START seen, GPU_END never seen
    "synth_open": "bool",  # SYNTH_START seen, SYNTH_END never seen
}

#: The columns of ``Session.partitions`` holding the time of a TIMELINE event, in a call's order.
EVENT_TIMES = ("synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end")

#: Column name -> dtype of ``Session.jobs`` (row position = job index).
JOB_COLUMNS: dict[str, str] = {
    "job_id": "object",  # str
    "kind": "object",  # str or None (partitioned PoRep jobs carry no kind)
    "partitions": "int32",  # GPU calls of this job (rows in partitions)
    "monolithic": "bool",
}

#: Column name -> dtype of ``Session.unattributed``: the CUZK_TIMING blocks no GPU call took.
#: Their kernel time is still the session's (it counts in the kernel total); ``kernel_start``
#: is where the block's acquire line stands in the file (the offset of the TIMELINE event
#: before it), since no GPU_START places it.
BLOCK_COLUMNS: dict[str, str] = {
    "kernel_start": "float64",
    "kernel_ms": "float64",
    "ntt_msm_h_ms": "float64",
    "batch_add_ms": "float64",
    "tail_msm_ms": "float64",
}

#: Column name -> dtype of ``Session.workers``, sorted by worker.
WORKER_COLUMNS: dict[str, str] = {
    "worker": "int32",
    "gpu": "int32",
}


def empty_frame(columns: dict[str, str]) -> Frame:
    """A zero-row frame with the given columns and dtypes."""
    return empty_like(columns)


def conform(frame: object, columns: dict[str, str]) -> Frame:
    """``frame`` (a ``Frame``, a mapping of equally long columns, or anything indexable by
    column name with a length, such as a pandas DataFrame) with exactly ``columns`` in
    order and their dtypes: a missing column is NaN / -1 / False / None, a NaN in an
    integer column -1, in a bool column False."""
    n = _rows(frame)
    out: dict[str, np.ndarray] = {}
    for name, dtype in columns.items():
        if frame is not None and name in frame:
            col = np.asarray(frame[name])
            if dtype.startswith("int") or dtype == "bool":
                fill = -1 if dtype != "bool" else False
                if col.dtype.kind == "f":
                    col = np.where(np.isnan(col), fill, col)
                elif col.dtype == object:
                    col = np.array([fill if _missing(v) else v for v in col.tolist()])
            out[name] = col.astype(dtype, copy=False)
        elif dtype == "float64":
            out[name] = np.full(n, np.nan)
        elif dtype == "bool":
            out[name] = np.zeros(n, dtype=bool)
        elif dtype == "object":
            out[name] = np.full(n, None, dtype=object)
        else:
            out[name] = np.full(n, -1, dtype=dtype)
    return frame_of(out, columns)


def _rows(frame: object) -> int:
    """Rows of a frame-like: a mapping's first column length, else ``len``."""
    if frame is None:
        return 0
    if isinstance(frame, Mapping):
        return len(np.asarray(next(iter(frame.values())))) if len(frame) else 0
    return len(frame)  # type: ignore[arg-type]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def frame_of(arrays: Mapping[str, object], columns: dict[str, str]) -> Frame:
    """A frame of ``arrays`` in ``columns``' order and dtypes."""
    out = {}
    for k, dtype in columns.items():
        a = arrays[k]
        if dtype == "object":  # text kept as text (``keys.TEXT``), anything else as objects
            keep = isinstance(a, np.ndarray) and a.dtype == TEXT
            out[k] = a if keep else np.asarray(a, dtype=object)
        else:
            out[k] = np.asarray(a).astype(dtype, copy=False)
    return Frame(out)


#: No unattributed block: one shared empty table (tables are never written).
NO_BLOCKS = empty_frame(BLOCK_COLUMNS)


@dataclass(eq=False)
class Session:
    """One daemon run: its GPU calls, jobs and workers, plus what the reader saw."""

    index: int
    partitions: Frame
    jobs: Frame
    workers: Frame
    events: int = 0  # TIMELINE events accepted
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> lines
    start_ms: float = 0.0  # first event of the session
    end_ms: float = 0.0  # last event of the session
    kernel_source: str = KERNEL_SOURCE_GPU_MS
    notes: list[str] = field(default_factory=list)  # e.g. ambiguous kernel attribution
    kernel_blocks: int = 0  # CUZK_TIMING blocks read (one per mutex-acquired line)
    ambiguous_blocks: int = 0  # blocks matched with several plausible calls (several GPUs)
    unattributed: Frame = field(default_factory=lambda: NO_BLOCKS)
    #: What the log's head states (``viewer.io.facts``): the first session's only, the
    #: others' heads are not read.
    facts: Facts = NOTHING

    @property
    def number(self) -> int:
        """The session's number as people read and type it: counted from 1 (``index`` is its
        position in ``Timeline.sessions``, counted from 0)."""
        return self.index + 1

    @property
    def gpus(self) -> dict[int, list[int]]:
        """GPU ordinal -> its worker ids, both ascending."""
        out: dict[int, list[int]] = {}
        for worker, gpu in zip(self.workers["worker"], self.workers["gpu"], strict=True):
            out.setdefault(int(gpu), []).append(int(worker))
        return {g: sorted(ws) for g, ws in sorted(out.items())}

    @property
    def open_intervals(self) -> int:
        """GPU calls that started and never ended (a crash, or a log still being written)."""
        return int(self.partitions["gpu_open"].sum())

    def job_ids(self) -> np.ndarray:
        """Job id of every partition row, as an object array."""
        return self.jobs["job_id"][self.partitions["job"]]

    @property
    def unattributed_blocks(self) -> int:
        """CUZK_TIMING blocks no GPU call took (their kernel time counts in no call)."""
        return len(self.unattributed)

    @property
    def unattributed_kernel_ms(self) -> float:
        """Kernel time of the blocks no GPU call took."""
        return float(np.nansum(self.unattributed["kernel_ms"]))

    @property
    def skipped_timeline_lines(self) -> int:
        """TIMELINE-looking lines the reader skipped (CUZK_TIMING lines not counted)."""
        return _timeline_skips(self.skipped)

    def skipped_share(self) -> float:
        """Skipped share of the TIMELINE-looking lines (0.0 when there are none)."""
        return _share(self.skipped_timeline_lines, self.events)


@dataclass(eq=False)
class Timeline:
    """Everything read from one log file."""

    source: Path
    sessions: list[Session]
    skipped: dict[str, int] = field(default_factory=dict)  # lines outside any session

    @property
    def events(self) -> int:
        return sum(s.events for s in self.sessions)

    def skipped_share(self) -> float:
        """Skipped share of the file's TIMELINE-looking lines, e.g. to warn over 1 %."""
        skipped = sum(s.skipped_timeline_lines for s in self.sessions)
        return _share(skipped + _timeline_skips(self.skipped), self.events)

    def numbered(self, number: int | None) -> Session:
        """Session ``number`` (counted from 1, as the window, the CLI and every text name
        them), or the main session when None; ValueError naming the file and the numbers
        it has."""
        if not self.sessions:
            raise ValueError(f"{display_path(self.source)} holds no session")
        if number is None:
            return self.sessions[self.main_session_position()]
        for s in self.sessions:
            if s.number == number:
                return s
        raise ValueError(
            f"no session {number} in {display_path(self.source)} "
            f"(sessions are numbered {self.session_numbers()})"
        )

    def session_numbers(self) -> str:
        """The session numbers it holds, for a message: "1", "1-3" or "none"."""
        numbers = [s.number for s in self.sessions]
        if not numbers:
            return "none"
        lo, hi = min(numbers), max(numbers)
        if numbers == list(range(lo, hi + 1)):
            return str(lo) if lo == hi else f"{lo}-{hi}"
        return ", ".join(map(str, numbers))

    def main_session_position(self) -> int:
        """Position of the session with the most GPU calls (the later one on a tie): the run
        that matters, as a short crashed run rarely is; 0 when there is no session."""
        sizes = [len(s.partitions) for s in self.sessions]
        return max(range(len(sizes)), key=lambda i: (sizes[i], i)) if sizes else 0


#: Control characters (C0, DEL, C1) as escapes: a name or label that holds them must not
#: move the cursor, retitle the terminal or forge a line of the output.
_CONTROLS = {
    c: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(chr(c), f"\\x{c:02x}")
    for c in (*range(0x20), *range(0x7F, 0xA0))
}


def printable(text: str) -> str:
    """``text`` with every lone surrogate shown as an escape (undecodable bytes of a file
    name, ``os.fsdecode``, as ``\\xff``, any other as ``\\udXXX``) and every control
    character too (``\\x1b``, ``\\n``)."""
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.translate(_CONTROLS)


def display_path(path: object) -> str:
    """A file name as a person can read it and any encoder can write it: bytes that are not
    UTF-8 (a name from ``os.fsdecode(b"bad\\xff.log")``) are shown as ``\\xff``."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        return path.decode("utf-8", "backslashreplace").translate(_CONTROLS)
    return printable(str(path))


def _timeline_skips(skipped: dict[str, int]) -> int:
    return sum(n for reason, n in skipped.items() if reason not in CUZK_SKIP_REASONS)


def _share(skipped: int, read: int) -> float:
    return skipped / (skipped + read) if skipped else 0.0
