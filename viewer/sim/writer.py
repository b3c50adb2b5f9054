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
from viewer.sim.lines import groups, in_order
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

    Lines are built one group (kind of line) at a time, in causal order, so that a
    stable sort keeps the causal order of lines written in the same millisecond
    (``viewer.sim.lines``).
    """
    gs = groups(s, o.era, o.cuzk_timing, o.disorder_ms, o.seed)
    everyone = np.arange(len(s.draws.job))
    head = startup_lines(s, o) if o.tracing else []
    keys = np.concatenate([np.zeros(len(head), np.int64), *(g.key(everyone) for g in gs)])
    texts = list(itertools.chain(head, *(g.text(everyone) for g in gs)))
    order = np.argsort(keys, kind="stable")
    if o.until_ms is not None:
        order = order[keys[order] <= o.until_ms]
    return keys[order], [texts[i] for i in order.tolist()]


def streamed_lines(s: Schedule, o: WriteOptions) -> Iterator[tuple[np.ndarray, list[str]]]:
    """``important_lines`` a slice of time at a time (``lines.in_order``): the startup
    lines, then the others in write order, none made long before it is written."""
    gs = groups(s, o.era, o.cuzk_timing, o.disorder_ms, o.seed)
    head = startup_lines(s, o) if o.tracing else []
    if head and (o.until_ms is None or o.until_ms >= 0):
        yield np.zeros(len(head), np.int64), head
    yield from in_order(gs, len(s.draws.job), o.until_ms)


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
    wall = keys.astype(np.int64) + o.wall_start_ms  # (a wall clock's ms pass an int32)
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
    """Write the log to the open binary file ``f``; returns bytes written.  Without noise
    its lines are made as they are written (``streamed_lines``); noise bursts are drawn
    over every line at once."""
    if o.noise and o.tracing:
        keys, texts = important_lines(s, o)
        return _write_threaded(f, physical_lines(keys, texts, o))
    chunks = (
        text for keys, lines in streamed_lines(s, o) for text in physical_lines(keys, lines, o)
    )
    return _write_threaded(f, chunks)


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


__all__ = [
    "WriteOptions",
    "important_lines",
    "physical_lines",
    "render",
    "streamed_lines",
    "write",
    "write_stream",
]
