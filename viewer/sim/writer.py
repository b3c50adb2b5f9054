"""Turn a schedule into daemon log lines, in the order the daemon writes them.

Every line is written at the time it happens: TIMELINE lines of different
threads may trail their event by a few ms (``disorder_ms``), never out of
causal order within one partition; CUZK_TIMING lines come at the instant of
their step, so two workers' blocks interleave as on a real GPU.
"""

from __future__ import annotations

import gzip
import itertools
import operator
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from viewer.sim.budget import GIB, lookahead, partitions_in_budget
from viewer.sim.model import Schedule
from viewer.sim.noise import (
    WALL_START_MS,
    body,
    journal_prefix,
    noise_pool,
    stamp,
)

CHUNK_LINES = 50_000
BURST_SHARE = 0.25  # share of lines preceded by a burst of noise


@dataclass(frozen=True)
class WriteOptions:
    """How the log looks; ``noise`` is the fraction of the file's bytes that are noise."""

    era: str = "new"  # "old": CHAN_SEND instead of GPU_QUEUE
    cuzk_timing: bool = True
    tracing: bool = True
    journald: bool = False
    crlf: bool = False
    noise: float = 0.0
    disorder_ms: int = 2
    wall_start_ms: int = WALL_START_MS
    pid: int = 4242
    until_ms: int | None = None  # the daemon died then: nothing later is written
    seed: int = 0


def important_lines(s: Schedule, o: WriteOptions) -> tuple[np.ndarray, list[str]]:
    """(write time, text) of every non-noise line, sorted by write time.

    Lines are built one column (event kind) at a time, in causal order, so that a
    stable sort keeps the causal order of lines written in the same millisecond.
    """
    d = s.draws
    rng = np.random.default_rng([o.seed, 1])
    ev = np.stack([s.synth_start, s.synth_end, s.queued, s.pickup, s.start, s.end], axis=1)
    if (ev < 0).any():
        raise ValueError("the schedule has unfinished calls")
    write_at = ev + rng.integers(0, o.disorder_ms + 1, ev.shape)
    write_at = np.maximum.accumulate(write_at, axis=1)
    jid = [d.job_ids[j] for j in d.job.tolist()]
    part = [f"partition={p}" if p >= 0 else "" for p in d.part.tolist()]
    first = [p or f"kind={d.job_kind[j]}" for p, j in zip(part, d.job.tolist(), strict=True)]
    synth = [
        f"{p},synth_ms={y}" if p else f"synth_ms={y}"
        for p, y in zip(part, d.synth.tolist(), strict=True)
    ]
    worker = [
        f"worker={w},{p}" if p else f"worker={w}"
        for w, p in zip(s.worker.tolist(), part, strict=True)
    ]
    end = [f"{w},gpu_ms={g}" for w, g in zip(worker, (s.end - s.start).tolist(), strict=True)]
    queue = "CHAN_SEND" if o.era == "old" else "GPU_QUEUE"
    names = ("SYNTH_START", "SYNTH_END", queue, "GPU_PICKUP", "GPU_START", "GPU_END")
    details = (first, synth, [p or "monolithic" for p in part], worker, worker, end)
    at = ev.T.tolist()

    def timeline(e: int) -> tuple[np.ndarray, list[str]]:
        name = names[e]
        lines = [
            f"TIMELINE,{t},{name},{j},{x}\n" for t, j, x in zip(at[e], jid, details[e], strict=True)
        ]
        return write_at[:, e], lines

    groups = [timeline(e) for e in range(5)]
    if o.cuzk_timing:
        groups += _cuzk_groups(s)
    groups.append(timeline(5))
    head = startup_lines(s, o) if o.tracing else []
    keys = np.concatenate([np.zeros(len(head), np.int64), *(g[0] for g in groups)])
    texts = list(itertools.chain(head, *(g[1] for g in groups)))
    order = np.argsort(keys, kind="stable")
    if o.until_ms is not None:
        order = order[keys[order] <= o.until_ms]
    return keys[order], [texts[i] for i in order.tolist()]


def _cuzk_groups(s: Schedule) -> list[tuple[np.ndarray, list[str]]]:
    """The eight CUZK_TIMING lines of every call, each at the instant of its step."""
    d = s.draws
    a, r = s.acquire, s.release
    after_ntt = a + s.ntt + d.barrier

    def col(times: np.ndarray, fmt: str, *values: np.ndarray) -> tuple[np.ndarray, list[str]]:
        cols = [v.tolist() for v in values]
        return times, [("CUZK_TIMING: " + fmt + "\n") % v for v in zip(*cols, strict=True)]

    # Lines written in one millisecond keep this order (the sort is stable): a block's
    # kernel lines and its mutex_held (written before the unlock, as upstream does) come
    # before the acquire line of the next block on that GPU.
    return [
        col(s.start + d.prep, "prep_msm_ms=%d", d.prep),
        col(a + s.ntt, "gpu_tid=0 ntt_msm_h_ms=%d", s.ntt),
        col(after_ntt, "gpu_tid=0 barrier_wait_ms=%d", d.barrier),
        col(after_ntt + d.batch, "gpu_tid=0 batch_add_ms=%d", d.batch),
        col(a + s.kernel, "gpu_tid=0 tail_msm_ms=%d gpu_total_ms=%d", d.tail, s.kernel),
        col(r, "mutex_held_ms=%d total_start_fn_ms=%d", r - a, r - s.start),
        col(a, "pre_lock_cpu_ms=%d mutex_wait_ms=%d", s.prelock, s.wait),
        col(r + d.b_g2, "b_g2_msm_ms=%d num_circuits=%d", d.b_g2, d.circuits),
    ]


def startup_lines(s: Schedule, o: WriteOptions) -> list[str]:
    """`cuzk-daemon starting`, the synthesis workers, one `pipeline GPU worker started` per
    worker; a budget-gated daemon's budget and the concurrency it sized from it instead of
    a fixed count (``budget_lines``)."""
    cfg, w0 = s.config, o.wall_start_ms
    engine = "cuzk_core::engine"
    out = [
        stamp(w0, 212)
        + body(
            "INFO", "cuzk_daemon", "cuzk-daemon starting", version="0.8.0", listen="0.0.0.0:9820"
        ),
    ]
    budget = budget_lines(s, o) if cfg.budget_gib is not None else []
    if budget:
        out += budget[:2]
    else:
        out.append(stamp(w0, 731) + body("INFO", engine, "partition workers started", count=cfg.pw))
    for w in range(cfg.gw * cfg.gpus):
        out.append(
            stamp(w0 + 1, 272 + 41 * w)
            + body(
                "INFO",
                engine,
                "pipeline GPU worker started",
                worker_id=w,
                gpu=w // cfg.gw,
                sub_id=w % cfg.gw,
            )
        )
    return out + budget[2:]


def budget_lines(s: Schedule, o: WriteOptions) -> list[str]:
    """A budget-gated daemon's lines, as engine.rs ~1196, ~1338 and ~1839 write them (the
    last one's ``num_gpus`` is the GPU workers, as upstream's is)."""
    cfg, w0 = s.config, o.wall_start_ms
    engine = "cuzk_core::engine"
    budget = float(cfg.budget_gib)
    workers = cfg.gw * cfg.gpus
    gpus = "[" + ", ".join(map(str, range(cfg.gpus))) + "]"
    return [
        stamp(w0, 640)
        + body(
            "INFO",
            engine,
            "memory budget initialized",
            total_budget_gib=int(budget * GIB) // GIB,
        ),
        stamp(w0, 731)
        + body(
            "INFO",
            engine,
            "initializing GPU workers",
            num_gpus=cfg.gpus,
            gpu_workers_per_device=cfg.gw,
            total_workers=workers,
            gpus=gpus,
        ),
        stamp(w0 + 1, 272 + 41 * workers)
        + body(
            "INFO",
            engine,
            "starting pipeline: synthesis task + GPU workers (budget-gated)",
            configured_lookahead=1,
            max_partitions_in_budget=partitions_in_budget(budget),
            effective_lookahead=lookahead(budget),
            synth_worker_count=cfg.pw,
            num_gpus=workers,
        ),
    ]


def physical_lines(keys: np.ndarray, texts: list[str], o: WriteOptions) -> Iterator[str]:
    """The file's text in chunks: noise bursts, journald prefixes and line ends added."""
    rng = np.random.default_rng([o.seed, 2])
    n = len(texts)
    wall = keys + o.wall_start_ms
    prefixes = [""] * n
    if o.journald and n:
        secs, inverse = np.unique(wall // 1000, return_inverse=True)
        per_sec = [journal_prefix(int(sec) * 1000, pid=o.pid) for sec in secs.tolist()]
        prefixes = [per_sec[k] for k in inverse.tolist()]
        texts = list(map(operator.add, prefixes, texts))
    noise = o.noise if o.tracing else 0.0
    pool = noise_pool(rng) if noise and n else []
    at = np.zeros(0, np.int64)
    counts = np.zeros(0, np.int64)
    if pool:
        # ``noise`` is a fraction of the file's bytes; it comes in bursts before some lines.
        sample = texts[:: max(1, n // 5000)]
        mean_text = sum(map(len, sample)) / len(sample)
        mean_noise = sum(map(len, pool)) / len(pool) + len(prefixes[0]) + 37
        lam = noise / (1 - noise) * mean_text / mean_noise
        # Never before the first line: a daemon's first words are `cuzk-daemon starting`.
        at = np.flatnonzero(rng.random(n) < BURST_SHARE)
        at = at[at > 0]
        counts = rng.poisson(lam / BURST_SHARE, len(at))
        at, counts = at[counts > 0], counts[counts > 0]
    size = len(pool)
    pool2 = pool + pool
    micros = rng.integers(0, 1000, len(at)).tolist()
    wall_l = wall.tolist()
    pos = prev = 0
    buf: list[str] = []
    for p, c, us in zip(at.tolist(), counts.tolist(), micros, strict=True):
        buf.extend(texts[prev:p])
        prev = p
        sep = prefixes[p] + stamp(wall_l[p], us)
        while c:
            take = min(c, size)
            buf.append(sep)
            buf.append(sep.join(pool2[pos : pos + take]))
            pos = (pos + take) % size
            c -= take
        if len(buf) >= CHUNK_LINES:
            yield _ends("".join(buf), o)
            buf.clear()
    for k in range(prev, n, CHUNK_LINES):
        buf.extend(texts[k : k + CHUNK_LINES])
        yield _ends("".join(buf), o)
        buf.clear()
    if buf:
        yield _ends("".join(buf), o)


def _ends(chunk: str, o: WriteOptions) -> str:
    return chunk.replace("\n", "\r\n") if o.crlf else chunk


def render(s: Schedule, o: WriteOptions) -> str:
    """The whole log as one string (small logs)."""
    keys, texts = important_lines(s, o)
    return "".join(physical_lines(keys, texts, o))


def write(s: Schedule, path: str | Path, o: WriteOptions) -> int:
    """Write the log to ``path`` (gzip when it ends in .gz); returns bytes written.

    A second thread does the disk writes (they release the GIL), so generating
    the next chunk overlaps writing the last one.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as f:
        return write_stream(s, f, o)


def write_stream(s: Schedule, f: BinaryIO, o: WriteOptions) -> int:
    """Write the log to the open binary file ``f``; returns bytes written."""
    keys, texts = important_lines(s, o)
    return _write_threaded(f, physical_lines(keys, texts, o))


def _write_threaded(f: BinaryIO, texts: Iterator[str]) -> int:
    """Encode ``texts`` here, write them in a second thread; returns bytes written."""
    chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
    failed: list[OSError] = []

    def drain() -> None:
        while (chunk := chunks.get()) is not None:
            if not failed:
                try:
                    f.write(chunk)
                except OSError as e:
                    failed.append(e)

    writer = threading.Thread(target=drain, name="sim-writer")
    writer.start()
    total = 0
    try:
        for text in texts:
            data = text.encode()
            total += len(data)
            chunks.put(data)
            if failed:
                break
    finally:
        chunks.put(None)
        writer.join()
    if failed:
        raise failed[0]
    return total


__all__ = ["WriteOptions", "important_lines", "physical_lines", "render", "write", "write_stream"]
