"""Build Sessions: ``session_tables`` assembles the tables of any number of sessions in one
vectorized pass (the reader's way: 3000 daemon runs in one log cost one pass, not 3000),
``build_session`` one Session from a flat per-call frame (the simulator's checks and the
tests); both give the same tables."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from viewer.model.frame import Frame, constant, is_constant
from viewer.model.keys import factorize, text_take
from viewer.model.timeline import (
    BLOCK_COLUMNS,
    EVENT_TIMES,
    JOB_COLUMNS,
    KERNEL_SOURCE_GPU_MS,
    KERNEL_SOURCE_TIMING,
    PARTITION_COLUMNS,
    WORKER_COLUMNS,
    Session,
    conform,
    frame_of,
)

#: The columns rows are sorted by (NaN last): GPU_START, then SYNTH_START, job, partition.
SORT_KEYS = ("gpu_start", "synth_start", "job", "partition")


@dataclass
class Tables:
    """The three tables of one session (``Session.partitions``, ``.jobs``, ``.workers``)."""

    partitions: Frame
    jobs: Frame
    workers: Frame


def session_tables(
    calls: Mapping[str, np.ndarray],
    job_ids: Sequence[str],
    kinds: Mapping[str, str | None] | np.ndarray,
    workers: Sequence[Mapping[int, int]],
    session: np.ndarray | None = None,
    *,
    consume: bool = False,
) -> list[Tables]:
    """The tables of ``len(workers)`` sessions from their calls, in one pass.

    ``calls``: any of ``PARTITION_COLUMNS`` (``job`` a code into ``job_ids``), one row per
    GPU call; ``session``: the session of each row, non-decreasing (None: all session 0).
    In each session jobs are numbered in order of first appearance among its rows, and
    rows are sorted by ``SORT_KEYS``.  ``kinds``: job id -> kind, or the kind of every
    job code (an object array).  ``workers``: worker -> GPU, per session.
    ``consume``: ``calls`` (a dict) gives its columns up, each let go once sorted into the
    table (the reader's calls are not held twice).
    """
    sessions = len(workers)
    n = len(calls["job"])
    session = np.zeros(n, np.int64) if session is None else session.astype(np.int64)
    key = session * max(len(job_ids), 1) + calls["job"].astype(np.int64)
    codes, uniques = factorize(key)  # sessions are contiguous: so are their job codes
    job_session = uniques // max(len(job_ids), 1)
    first_job = np.searchsorted(job_session, np.arange(sessions + 1))
    take = calls.pop if consume else calls.__getitem__
    cols = {name: np.asarray(take(name)) for name in PARTITION_COLUMNS if name in calls}
    if consume:
        calls.clear()  # the columns no table keeps
    cols["job"] = (codes - first_job[session]).astype(np.int32)
    cols = _conform_arrays(cols, n)
    mono = np.bincount(codes, weights=cols["partition"] < 0, minlength=len(uniques)) > 0
    order = np.lexsort([cols[k] for k in reversed(SORT_KEYS)] + [session])
    if not (order[1:] > order[:-1]).all():  # else the rows are in order already
        for name in cols:  # one column at a time: the unsorted one goes as it is replaced
            if not is_constant(cols[name]):
                cols[name] = cols[name][order]
    parts = frame_of(cols, PARTITION_COLUMNS)
    row_bounds = np.searchsorted(session[order], np.arange(sessions + 1))

    # The ids as text, the list's entries let go as copied (``consume``: the reader's list
    # is its only holder, and the ids then live once while they are copied).
    ids = text_take(job_ids, uniques % max(len(job_ids), 1), consume and isinstance(job_ids, list))
    jobs = frame_of(
        {
            "job_id": ids,
            "kind": (
                kinds[uniques % max(len(job_ids), 1)]
                if isinstance(kinds, np.ndarray)
                else np.array([kinds.get(j) for j in ids], dtype=object)
            ),
            "partitions": np.bincount(codes, minlength=len(uniques)).astype(np.int32),
            "monolithic": mono,
        },
        JOB_COLUMNS,
    )
    ws = [sorted(w.items()) for w in workers]
    flat = [pair for w in ws for pair in w]
    wk = frame_of(
        {
            "worker": np.array([w for w, _ in flat], dtype=np.int32),
            "gpu": np.array([g for _, g in flat], dtype=np.int32),
        },
        WORKER_COLUMNS,
    )
    worker_bounds = np.concatenate([[0], np.cumsum([len(w) for w in ws])])
    return [
        Tables(
            parts.rows_of(int(row_bounds[s]), int(row_bounds[s + 1])),
            jobs.rows_of(int(first_job[s]), int(first_job[s + 1])),
            wk.rows_of(int(worker_bounds[s]), int(worker_bounds[s + 1])),
        )
        for s in range(sessions)
    ]


def _conform_arrays(cols: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """``cols`` with every ``PARTITION_COLUMNS`` column in its dtype; ``gpu_open`` and
    ``synth_open`` default to "started, never ended"."""

    def missing(name: str) -> np.ndarray:
        return np.full(n, np.nan) if name not in cols else cols[name]

    if "gpu_open" not in cols:
        cols["gpu_open"] = ~np.isnan(missing("gpu_start")) & np.isnan(missing("gpu_end"))
    if "synth_open" not in cols:
        cols["synth_open"] = ~np.isnan(missing("synth_start")) & np.isnan(missing("synth_end"))
    out = {}
    for name, dtype in PARTITION_COLUMNS.items():
        if name in cols:
            out[name] = cols[name].astype(dtype, copy=False)
        else:  # a column no call has: one value, held once
            out[name] = constant(np.nan if dtype == "float64" else -1, n, dtype)
    return out


def build_session(
    calls: object,
    *,
    index: int = 0,
    kinds: Mapping[str, str | None] | None = None,
    workers: Mapping[int, int] | None = None,
    events: int | None = None,
    skipped: Mapping[str, int] | None = None,
    start_ms: float | None = None,
    end_ms: float | None = None,
    kernel_source: str | None = None,
    notes: Iterable[str] = (),
    kernel_blocks: int = 0,
    ambiguous_blocks: int = 0,
    unattributed: object = None,
) -> Session:
    """A Session from one row per GPU call.

    ``calls`` (a frame, a mapping of columns, anything indexable by column name such as a
    pandas DataFrame, or an iterable of row mappings) carries a ``job_id`` column (str)
    plus any of ``PARTITION_COLUMNS``
    except ``job``; missing columns default to NaN / -1 / False.  ``gpu_open``
    defaults to "has a GPU_START but no GPU_END".  Jobs are numbered in order
    of first appearance; ``kinds`` maps job id -> proof kind; ``workers`` maps
    worker -> GPU (default: every worker seen, GPU from the calls' ``gpu``).
    ``kernel_blocks``, ``ambiguous_blocks``, ``unattributed``: how the CUZK_TIMING blocks
    were matched to calls (``unattributed``: the blocks no call took, ``BLOCK_COLUMNS``).
    """
    frame = _columns_of(calls)
    ids = np.asarray(frame["job_id"] if "job_id" in frame else [], dtype=object)  # noqa: SIM401
    codes, uniques = factorize(ids)
    given = {k: dtype for k, dtype in PARTITION_COLUMNS.items() if k in frame and k != "job"}
    cols = conform(frame, given).to_dict()  # session_tables fills in the others
    cols["job"] = codes.astype(np.int32)
    if workers is None:
        worker = cols.get("worker", np.full(len(codes), -1, np.int32))
        gpu = cols.get("gpu", np.full(len(codes), -1, np.int32))
        workers = {}
        for w, g in zip(worker[worker >= 0].tolist(), gpu[worker >= 0].tolist(), strict=True):
            workers[w] = max(g, workers.get(w, g))
    (tables,) = session_tables(cols, [str(u) for u in uniques], kinds or {}, [workers])
    parts = tables.partitions
    times = parts[list(EVENT_TIMES)].to_numpy()
    finite = times[np.isfinite(times)]
    if kernel_source is None:
        has_kernel = bool(np.isfinite(parts["kernel_ms"]).any())
        kernel_source = KERNEL_SOURCE_TIMING if has_kernel else KERNEL_SOURCE_GPU_MS
    return Session(
        index=index,
        partitions=parts,
        jobs=tables.jobs,
        workers=tables.workers,
        events=int(events if events is not None else np.isfinite(times).sum()),
        skipped=dict(skipped or {}),
        start_ms=float(start_ms if start_ms is not None else (finite.min() if finite.size else 0)),
        end_ms=float(end_ms if end_ms is not None else (finite.max() if finite.size else 0)),
        kernel_source=kernel_source,
        notes=list(notes),
        kernel_blocks=int(kernel_blocks),
        ambiguous_blocks=int(ambiguous_blocks),
        unattributed=conform(
            None if unattributed is None else _columns_of(unattributed), BLOCK_COLUMNS
        ),
    )


def _columns_of(rows: object) -> object:
    """A frame-like (indexable by column name, with a length) from ``rows``: a frame or a
    mapping of columns as it is, an iterable of row mappings as a ``Frame``."""
    if isinstance(rows, Mapping) or hasattr(rows, "columns"):
        return rows
    rows = list(rows)  # type: ignore[call-overload]
    names = list(dict.fromkeys(k for r in rows for k in r))
    return Frame({k: _array([r.get(k, np.nan) for r in rows]) for k in names}, len(rows))


def _array(values: list) -> np.ndarray:
    """``values`` as numbers where numpy can, else as objects (text stays ``str``)."""
    array = np.array(values)
    return array if array.dtype.kind in "biuf" else np.array(values, dtype=object)


def lazy_session(
    column: Callable[[str], np.ndarray],
    job: np.ndarray,
    job_ids: Sequence[str],
    kinds: np.ndarray,
    workers: Mapping[int, int],
    *,
    index: int = 0,
    kernel_source: str = KERNEL_SOURCE_TIMING,
) -> Session:
    """The Session ``build_session`` gives for one row per call, its partition columns each
    made when first read (and let go by ``cache.forget``): a played run's log has ~27
    columns a call, of which each figure reads a handful (1.5 M calls: 12 MB a column).

    ``column(name)``: the column ``name`` of ``PARTITION_COLUMNS`` (not ``job``), one value
    per call in call order (any numeric dtype); ``job``: per call, its job, whose id is
    ``job_ids[job]`` (distinct ids) and kind ``kinds[job]`` (an object array).  Rows,
    jobs and their numbering are ``build_session``'s."""
    codes, uniques = factorize(np.asarray(job))
    n = len(codes)
    rows_t = np.int32 if n < 2**31 else np.int64  # (the codes and the order are kept)
    codes = codes.astype(np.int32 if len(uniques) < 2**31 else np.int64)

    def col(name: str) -> np.ndarray:
        values, dtype = np.asarray(column(name)), PARTITION_COLUMNS[name]
        if is_constant(values):  # one value: held once
            return constant(values[0], n, dtype)
        return values.astype(dtype, copy=False)

    keys = [col("partition"), codes, col("synth_start"), col("gpu_start")]
    order = np.lexsort(keys).astype(rows_t)
    part = keys[0]
    del keys
    if (order[1:] > order[:-1]).all():
        order = None  # the rows are in order already

    def sorted_column(name: str) -> np.ndarray:
        values = codes.astype(np.int32, copy=False) if name == "job" else col(name)
        return values if order is None or is_constant(values) else values[order]

    names = [k for k in PARTITION_COLUMNS]
    parts = Frame.lazy({k: functools.partial(sorted_column, k) for k in names}, n)
    mono = np.bincount(codes, weights=part < 0, minlength=len(uniques)) > 0
    del part
    given = frame_of(
        {
            "kind": np.asarray(kinds, dtype=object)[uniques],
            "partitions": np.bincount(codes, minlength=len(uniques)).astype(np.int32),
            "monolithic": mono,
        },
        {k: v for k, v in JOB_COLUMNS.items() if k != "job_id"},
    )
    makers = {k: functools.partial(given.__getitem__, k) for k in given.columns}
    # The ids when read (a report's JSON, the window): the figures do not read them.
    makers["job_id"] = lambda: text_take(job_ids, uniques)
    jobs = Frame.lazy({k: makers[k] for k in JOB_COLUMNS}, len(uniques))
    pairs = sorted(workers.items())
    wk = frame_of(
        {
            "worker": np.array([w for w, _ in pairs], dtype=np.int32),
            "gpu": np.array([g for _, g in pairs], dtype=np.int32),
        },
        WORKER_COLUMNS,
    )
    # A column at a time: the events, the first and the last of them (as build_session).
    events, lo, hi = 0, np.inf, -np.inf
    for name in EVENT_TIMES:
        times = col(name)
        finite = times[np.isfinite(times)]
        events += len(finite)
        if len(finite):
            lo, hi = min(lo, float(finite.min())), max(hi, float(finite.max()))
        del times, finite
    return Session(
        index=index,
        partitions=parts,
        jobs=jobs,
        workers=wk,
        events=events,
        start_ms=lo if events else 0.0,
        end_ms=hi if events else 0.0,
        kernel_source=kernel_source,
        unattributed=conform(None, BLOCK_COLUMNS),
    )
