"""The lines a schedule's log holds besides noise, a group per kind of line (a TIMELINE
event, a CUZK_TIMING step): for any set of calls, when each line is written and its text.

``viewer.sim.writer`` writes them sorted by write time, a stable sort over the groups in
order and each group's calls in order (so lines written in one millisecond keep causal
order).  ``in_order`` gives that order a slice of time at a time, each group's calls
sorted once: a log of 1.5 M calls has 21 M lines, and their text made at once was ~200
bytes a line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from viewer.sim.model import Schedule

#: The TIMELINE events of a call, in causal order: (name, the schedule's time of it).
EVENTS = ("SYNTH_START", "SYNTH_END", "QUEUE", "GPU_PICKUP", "GPU_START", "GPU_END")
TIMES = ("synth_start", "synth_end", "queued", "pickup", "start", "end")


@dataclass(frozen=True)
class Group:
    """One kind of line: for calls ``idx`` (task positions), when each line is written
    (ms) and its text."""

    key: Callable[[np.ndarray], np.ndarray]
    text: Callable[[np.ndarray], list[str]]


def groups(s: Schedule, era: str, cuzk_timing: bool, disorder_ms: int, seed: int) -> list[Group]:
    """The groups in write order of ties: SYNTH_START to GPU_START, the eight CUZK_TIMING
    lines (``cuzk_timing``), GPU_END.  A TIMELINE line is written up to ``disorder_ms``
    after its event (drawn from ``seed``), never before the line of its call's event before
    it; a CUZK_TIMING line at the instant of its step.  ValueError for unfinished calls."""
    d = s.draws
    ev = [getattr(s, name) for name in TIMES]
    if any((t < 0).any() for t in ev):
        raise ValueError("the schedule has unfinished calls")
    rng = np.random.default_rng([seed, 1])
    late = rng.integers(0, disorder_ms + 1, (len(d.job), len(TIMES)))
    late = late.astype(np.min_scalar_type(disorder_ms), copy=False)
    ids = d.job_ids
    kinds = d.job_kind
    queue = "CHAN_SEND" if era == "old" else "GPU_QUEUE"
    names = (*EVENTS[:2], queue, *EVENTS[3:])

    def written(e: int, idx: np.ndarray) -> np.ndarray:
        """When the calls' lines of event ``e`` are written: never before the one before."""
        at = ev[0][idx] + late[idx, 0]
        for k in range(1, e + 1):
            at = np.maximum(at, ev[k][idx] + late[idx, k])
        return at

    def part(idx: np.ndarray) -> list[str]:
        return [f"partition={p}" if p >= 0 else "" for p in d.part[idx].tolist()]

    def worker(idx: np.ndarray) -> list[str]:
        return [
            f"worker={w},{p}" if p else f"worker={w}"
            for w, p in zip(s.worker[idx].tolist(), part(idx), strict=True)
        ]

    details: tuple[Callable[[np.ndarray], list[str]], ...] = (
        lambda idx: [
            p or f"kind={kinds[j]}" for p, j in zip(part(idx), d.job[idx].tolist(), strict=True)
        ],
        lambda idx: [
            f"{p},synth_ms={y}" if p else f"synth_ms={y}"
            for p, y in zip(part(idx), d.synth[idx].tolist(), strict=True)
        ],
        lambda idx: [p or "monolithic" for p in part(idx)],
        worker,
        worker,
        lambda idx: [
            f"{w},gpu_ms={g}"
            for w, g in zip(worker(idx), (s.end[idx] - s.start[idx]).tolist(), strict=True)
        ],
    )

    def timeline(e: int) -> Group:
        def text(idx: np.ndarray) -> list[str]:
            jid = [ids[j] for j in d.job[idx].tolist()]
            return [
                f"TIMELINE,{t},{names[e]},{j},{x}\n"
                for t, j, x in zip(ev[e][idx].tolist(), jid, details[e](idx), strict=True)
            ]

        return Group(lambda idx: written(e, idx), text)

    out = [timeline(e) for e in range(5)]
    if cuzk_timing:
        out += _cuzk_groups(s)
    return [*out, timeline(5)]


def _cuzk_groups(s: Schedule) -> list[Group]:
    """The eight CUZK_TIMING lines of every call, each at the instant of its step."""
    d = s.draws

    def col(
        times: Callable[[np.ndarray], np.ndarray],
        fmt: str,
        *values: Callable[[np.ndarray], np.ndarray],
    ) -> Group:
        line = "CUZK_TIMING: " + fmt + "\n"

        def text(idx: np.ndarray) -> list[str]:
            cols = [v(idx).tolist() for v in values]
            return [line % v for v in zip(*cols, strict=True)]

        return Group(times, text)

    def ntt(i: np.ndarray) -> np.ndarray:
        return d.ntt[i] + s.warm[i]

    def kernel(i: np.ndarray) -> np.ndarray:
        return ntt(i) + d.barrier[i] + d.batch[i] + d.tail[i]

    def prelock(i: np.ndarray) -> np.ndarray:
        return d.prep[i] + d.prelock_extra[i]

    a, r = s.acquire, s.release
    # Lines written in one millisecond keep this order (the sort is stable): a block's
    # kernel lines and its mutex_held (written before the unlock, as upstream does) come
    # before the acquire line of the next block on that GPU.
    return [
        col(lambda i: s.start[i] + d.prep[i], "prep_msm_ms=%d", lambda i: d.prep[i]),
        col(lambda i: a[i] + ntt(i), "gpu_tid=0 ntt_msm_h_ms=%d", ntt),
        col(
            lambda i: a[i] + ntt(i) + d.barrier[i],
            "gpu_tid=0 barrier_wait_ms=%d",
            lambda i: d.barrier[i],
        ),
        col(
            lambda i: a[i] + ntt(i) + d.barrier[i] + d.batch[i],
            "gpu_tid=0 batch_add_ms=%d",
            lambda i: d.batch[i],
        ),
        col(
            lambda i: a[i] + kernel(i),
            "gpu_tid=0 tail_msm_ms=%d gpu_total_ms=%d",
            lambda i: d.tail[i],
            kernel,
        ),
        col(
            lambda i: r[i],
            "mutex_held_ms=%d total_start_fn_ms=%d",
            lambda i: r[i] - a[i],
            lambda i: r[i] - s.start[i],
        ),
        col(
            lambda i: a[i],
            "pre_lock_cpu_ms=%d mutex_wait_ms=%d",
            prelock,
            lambda i: a[i] - s.start[i] - prelock(i),
        ),
        col(
            lambda i: r[i] + d.b_g2[i],
            "b_g2_msm_ms=%d num_circuits=%d",
            lambda i: d.b_g2[i],
            lambda i: d.circuits[i],
        ),
    ]


def _by_time(g: Group, n: int) -> np.ndarray | None:
    """Group ``g``'s ``n`` calls by write time (ties in call order); None where that is
    call order (a log of one-call jobs in arrival order: no copy of it)."""
    order = np.argsort(g.key(np.arange(n)), kind="stable")
    if (order[1:] > order[:-1]).all():
        return None
    return order.astype(np.int32 if n < 2**31 else np.int64)


#: Lines a slice of time holds at most from each group (more only where one millisecond
#: holds more).
SLICE_LINES = 1024


def in_order(
    gs: list[Group], n: int, until_ms: int | None = None
) -> Iterator[tuple[np.ndarray, list[str]]]:
    """The lines of groups ``gs`` of ``n`` calls sorted by write time, ties in group then
    call order (those written after ``until_ms`` left out): (write times, texts) a slice
    of time at a time."""
    orders = [_by_time(g, n) for g in gs]
    at = [0] * len(gs)

    def calls(g: int, a: int, b: int) -> np.ndarray:
        """The calls at places [a, b) of group ``g`` in time order."""
        order = orders[g]
        return np.arange(a, min(b, n)) if order is None else order[a:b]

    def key_at(g: int, k: int) -> int | None:
        return int(gs[g].key(calls(g, k, k + 1))[0]) if k < n else None

    while True:
        heads = [k for g in range(len(gs)) if (k := key_at(g, at[g])) is not None]
        if not heads:
            return
        lo = min(heads)
        if until_ms is not None and lo > until_ms:
            return
        ahead = [k for g in range(len(gs)) if (k := key_at(g, at[g] + SLICE_LINES)) is not None]
        hi = max(min(ahead), lo + 1) if ahead else None  # [lo, hi): hi None, to the end
        keys, group, call, texts = [], [], [], []
        for g, grp in enumerate(gs):
            end = at[g]
            while end < n:  # the calls written before hi (one ms may hold more)
                chunk = calls(g, end, end + SLICE_LINES)
                k = grp.key(chunk)
                took = len(k) if hi is None else int(np.searchsorted(k, hi))
                end += took
                if took < len(chunk):
                    break
            idx = calls(g, at[g], end)
            at[g] = end
            if not len(idx):
                continue
            k = grp.key(idx)
            keys.append(k)
            group.append(np.full(len(idx), g, np.int32))
            call.append(idx)
            texts.append(grp.text(idx))
        k, g, c = np.concatenate(keys), np.concatenate(group), np.concatenate(call)
        order = np.lexsort((c, g, k))
        if until_ms is not None:
            order = order[k[order] <= until_ms]
        flat = [t for ts in texts for t in ts]
        yield k[order], [flat[i] for i in order.tolist()]
