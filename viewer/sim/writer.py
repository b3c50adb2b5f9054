"""Turn a schedule into daemon log lines, in the order the daemon writes them.

Every line is written at the time it happens: TIMELINE lines of different
threads may trail their event by a few ms (``disorder_ms``), never out of
causal order within one partition; CUZK_TIMING lines come at the instant of
their step, so two workers' blocks interleave as on a real GPU.
"""

from __future__ import annotations

import gzip
import operator
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from viewer.sim.model import Schedule
from viewer.sim.noise import (
    WALL_START_MS,
    body,
    journal_prefix,
    noise_pool,
    stamp,
    tracing_line,
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
    """(write time, text) of every non-noise line, sorted by write time."""
    d = s.draws
    rng = np.random.default_rng([o.seed, 1])
    n = len(d.job)
    ev = np.stack([s.synth_start, s.synth_end, s.queued, s.pickup, s.start, s.end], axis=1)
    write_at = ev + rng.integers(0, o.disorder_ms + 1, ev.shape)
    write_at = np.maximum.accumulate(write_at, axis=1)
    keys: list[int] = []
    texts: list[str] = []
    add_key, add_text = keys.append, texts.append
    if o.tracing:
        for line in startup_lines(s, o):
            add_key(0)
            add_text(line)
    queue_ev = "CHAN_SEND" if o.era == "old" else "GPU_QUEUE"
    cols = [c.tolist() for c in (d.job, d.part, d.synth, s.worker, d.prep, s.prelock, s.wait)]
    ev_l, w_l = ev.tolist(), write_at.tolist()
    parts_l = [a.tolist() for a in (s.ntt, d.barrier, d.batch, d.tail, d.b_g2, d.circuits)]
    acq_l, rel_l = s.acquire.tolist(), s.release.tolist()
    ids, kinds = d.job_ids, d.job_kind
    for i in range(n):
        job, part, synth, w, prep, prelock, wait = (c[i] for c in cols)
        jid = ids[job]
        t, k = ev_l[i], w_l[i]
        if t[0] < 0:
            continue
        if part >= 0:
            p = f"partition={part}"
            details = (p, f"{p},synth_ms={synth}", p, f"worker={w},{p}", f"worker={w},{p}")
        else:
            details = (
                f"kind={kinds[job]}",
                f"synth_ms={synth}",
                "monolithic",
                f"worker={w}",
                f"worker={w}",
            )
        names = ("SYNTH_START", "SYNTH_END", queue_ev, "GPU_PICKUP", "GPU_START")
        for e in range(5):
            if t[e] < 0:
                break
            add_key(k[e])
            add_text(f"TIMELINE,{t[e]},{names[e]},{jid},{details[e]}\n")
        if t[5] >= 0:
            add_key(k[5])
            gpu_ms = t[5] - t[4]
            tail = (
                f"worker={w},partition={part},gpu_ms={gpu_ms}"
                if part >= 0
                else (f"worker={w},gpu_ms={gpu_ms}")
            )
            add_text(f"TIMELINE,{t[5]},GPU_END,{jid},{tail}\n")
        if o.cuzk_timing and t[4] >= 0:
            ntt, barrier, batch, tail_ms, b_g2, circuits = (c[i] for c in parts_l)
            a, r = acq_l[i], rel_l[i]
            total = ntt + barrier + batch + tail_ms
            block = (
                (t[4] + prep, f"prep_msm_ms={prep}"),
                (a, f"pre_lock_cpu_ms={prelock} mutex_wait_ms={wait}"),
                (a + ntt, f"gpu_tid=0 ntt_msm_h_ms={ntt}"),
                (a + ntt + barrier, f"gpu_tid=0 barrier_wait_ms={barrier}"),
                (a + ntt + barrier + batch, f"gpu_tid=0 batch_add_ms={batch}"),
                (a + total, f"gpu_tid=0 tail_msm_ms={tail_ms} gpu_total_ms={total}"),
                (r, f"mutex_held_ms={r - a} total_start_fn_ms={r - t[4]}"),
                (r + b_g2, f"b_g2_msm_ms={b_g2} num_circuits={circuits}"),
            )
            for at, text in block:
                add_key(at)
                add_text(f"CUZK_TIMING: {text}\n")
    key_arr = np.asarray(keys, np.int64)
    order = np.argsort(key_arr, kind="stable")
    if o.until_ms is not None:
        order = order[key_arr[order] <= o.until_ms]
    return key_arr[order], [texts[i] for i in order.tolist()]


def startup_lines(s: Schedule, o: WriteOptions) -> list[str]:
    """`cuzk-daemon starting` and one `pipeline GPU worker started` per worker."""
    cfg, w0 = s.config, o.wall_start_ms
    out = [
        tracing_line(
            w0,
            "INFO",
            "cuzk_daemon",
            "cuzk-daemon starting",
            version="0.8.0",
            listen="0.0.0.0:9820",
        ),
        tracing_line(w0, "INFO", "cuzk_core::engine", "partition workers started", count=cfg.pw),
    ]
    for w in range(cfg.gw * cfg.gpus):
        out.append(
            tracing_line(
                w0 + 1,
                "INFO",
                "cuzk_core::engine",
                "pipeline GPU worker started",
                worker_id=w,
                gpu=w // cfg.gw,
                sub_id=w % cfg.gw,
            )
        )
    return out


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


def write(s: Schedule, path: str, o: WriteOptions) -> int:
    """Write the log to ``path`` (gzip when it ends in .gz); returns characters written."""
    keys, texts = important_lines(s, o)
    total = 0
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8", newline="") as f:
        for chunk in physical_lines(keys, texts, o):
            total += f.write(chunk)
    return total


__all__ = ["WriteOptions", "body", "important_lines", "physical_lines", "render", "write"]
