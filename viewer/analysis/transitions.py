"""Sector transitions (job N -> N+1 on the GPU) and the cold start they reveal.

Jobs are ordered by their first GPU_START over the whole session.  With several
GPUs jobs run side by side on different GPUs; transitions stay session-wide
(consecutive jobs in start order, whatever GPU they ran on) and ``worker``
says which GPU worker (hence which GPU) moved on to the next job.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from viewer.analysis.cache import per_session
from viewer.analysis.intervals import Range, calls, check_range
from viewer.analysis.stages import stages
from viewer.model import Session

TRANSITION_COLUMNS = [
    "from_job",
    "to_job",
    "from_id",
    "to_id",
    "time",
    "gap_ms",
    "overlap_ms",
    "starved",
    "cold_start",
    "worker",
]
COLD_COLUMNS = ["gpu", "start", "end", "label"]


def _empty() -> pd.DataFrame:
    dtypes = {"from_job": "int32", "to_job": "int32", "from_id": object, "to_id": object}
    dtypes |= {"starved": bool, "cold_start": bool, "worker": "int32", "gpu": "int32"}
    return pd.DataFrame(
        {k: pd.Series([], dtype=dtypes.get(k, "float64")) for k in [*TRANSITION_COLUMNS, "gpu"]}
    )


@per_session
def _all_transitions(session: Session) -> pd.DataFrame:
    """Every transition of the session, with ``cold_start`` decided on the whole run."""
    c = calls(session)
    if len(c) == 0:
        return _empty()
    # A worker's first call: it was free since the session started.
    first = stages(session)["worker_first"].to_numpy()[c["row"].to_numpy()]
    c = c.assign(free=np.where(first, session.start_ms, c["free"].to_numpy()))
    # First call of each job (calls are sorted by start, so the first row per job).
    firsts = c.drop_duplicates("job", keep="first").reset_index(drop=True)
    last_end = c.groupby("job")["end"].max()
    n = len(firsts) - 1
    if n < 1:
        return _empty()
    from_job = firsts["job"].to_numpy()[:-1]
    nxt = firsts.iloc[1:].reset_index(drop=True)
    time = nxt["start"].to_numpy()
    pairs = pd.DataFrame({"job": from_job, "time": time, "pos": np.arange(n)})
    ended = c.loc[c["closed"].to_numpy(), ["job", "end"]].sort_values("end", kind="stable")
    found = pd.merge_asof(
        pairs.sort_values("time", kind="stable"),
        ended,
        left_on="time",
        right_on="end",
        by="job",
        direction="backward",
        allow_exact_matches=True,
    ).sort_values("pos")
    latest = found["end"].to_numpy()
    gap = np.where(np.isfinite(latest), time - latest, 0.0)
    overlap = np.maximum(0.0, last_end.reindex(from_job).to_numpy() - time)
    starved = nxt["ready"].to_numpy() > nxt["free"].to_numpy()
    cold = starved & _synthesized_while_filling(session, nxt["job"].to_numpy())
    ids = session.jobs["job_id"].to_numpy()
    to_job = nxt["job"].to_numpy()
    return pd.DataFrame(
        {
            "from_job": from_job.astype("int32"),
            "to_job": to_job.astype("int32"),
            "from_id": ids[from_job],
            "to_id": ids[to_job],
            "time": time,
            "gap_ms": gap,
            "overlap_ms": overlap,
            "starved": starved,
            "cold_start": cold,
            "worker": nxt["worker"].to_numpy().astype("int32"),
            "gpu": nxt["gpu"].to_numpy().astype("int32"),
        }
    )


def _synthesized_while_filling(session: Session, jobs: np.ndarray) -> np.ndarray:
    """True for the jobs whose first SYNTH_START came before the session's first GPU_END:
    synthesized while the pipeline was still filling, with no finished work to overlap."""
    p = session.partitions
    first_end = np.fmin.reduce(p["gpu_end"].to_numpy(dtype=np.float64), initial=np.inf)
    first_synth = np.full(len(session.jobs), np.inf)
    np.fmin.at(first_synth, p["job"].to_numpy(), p["synth_start"].to_numpy(dtype=np.float64))
    return first_synth[jobs] < first_end


def transitions(session: Session, rng: Range = None) -> pd.DataFrame:
    """Job N -> N+1 transitions whose next job's first GPU_START lies in ``rng``.

    ``gap_ms`` = first GPU_START of N+1 minus the latest GPU_END of N at or
    before it (0 if none of N had ended); ``overlap_ms`` = max(0, last GPU_END
    of N minus that start); ``starved`` when N+1's first call was queued after
    the worker that took it (``worker``) became free; ``cold_start`` for the
    starved ones whose next job began synthesis before the session's first GPU_END
    (domain.md: a later starved transition is real starvation).
    """
    rng = check_range(rng)
    t = _all_transitions(session)
    if rng is not None and len(t):
        t = t[(t["time"] >= rng[0]) & (t["time"] <= rng[1])]
    return t[TRANSITION_COLUMNS].reset_index(drop=True)


def cold_start_regions(session: Session) -> pd.DataFrame:
    """Cold start per GPU: session start -> its first GPU_START, plus the cold transitions' gaps."""
    c = calls(session)
    firsts = c.groupby("gpu")["start"].min()
    head = pd.DataFrame(
        {
            "gpu": firsts.index.to_numpy().astype("int32"),
            "start": np.full(len(firsts), session.start_ms),
            "end": firsts.to_numpy().astype(np.float64),
            "label": "cold start",
        }
    )
    t = _all_transitions(session)
    t = t[t["cold_start"].to_numpy().astype(bool)] if len(t) else t
    tail = pd.DataFrame(
        {
            "gpu": t["gpu"].to_numpy().astype("int32"),
            "start": (t["time"] - t["gap_ms"]).to_numpy(dtype=np.float64),
            "end": t["time"].to_numpy(dtype=np.float64),
            "label": [
                f"cold start (job {a}->{b})"
                for a, b in zip(t["from_job"], t["to_job"], strict=True)
            ],
        }
    )
    out = pd.concat([head, tail], ignore_index=True) if len(tail) else head
    out = out.astype({"gpu": "int32", "start": "float64", "end": "float64", "label": object})
    return out[COLD_COLUMNS].sort_values(["gpu", "start"], kind="stable").reset_index(drop=True)
