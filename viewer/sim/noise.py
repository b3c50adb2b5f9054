"""Rust ``tracing`` lines as the daemon prints them (ANSI colours included), and noise.

Real logs are mostly such lines; the reader must skip them fast, so the
simulator makes plenty.  Noise bodies are drawn once into a pool and written
in slices, which is what makes gigabyte logs cheap to generate.
"""

from __future__ import annotations

import time
import uuid

import numpy as np

LEVELS = {
    "TRACE": "\x1b[35mTRACE\x1b[0m",
    "DEBUG": "\x1b[34mDEBUG\x1b[0m",
    "INFO": "\x1b[32m INFO\x1b[0m",
    "WARN": "\x1b[33m WARN\x1b[0m",
    "ERROR": "\x1b[31mERROR\x1b[0m",
}

#: 2026-02-19T01:00:00Z, the wall clock of offset 0 of the first session, in ms.
WALL_START_MS = 1_771_462_800_000

_second_cache: dict[int, str] = {}
_journal_cache: dict[tuple[int, str], str] = {}


def fields(**kv: object) -> str:
    """``key=value`` pairs with the escape codes tracing wraps them in."""
    return " ".join(f"\x1b[3m{k}\x1b[0m\x1b[2m=\x1b[0m{v}" for k, v in kv.items())


def body(level: str, target: str, message: str, **kv: object) -> str:
    """Everything after the timestamp, newline included."""
    tail = f" {fields(**kv)}" if kv else ""
    return f" {LEVELS[level]} \x1b[2m{target}\x1b[0m\x1b[2m:\x1b[0m {message}{tail}\n"


def stamp(wall_ms: int, micros: int = 0) -> str:
    """The dimmed RFC 3339 timestamp that starts a tracing line."""
    sec, ms = divmod(wall_ms, 1000)
    head = _second_cache.get(sec)
    if head is None:
        head = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        _second_cache[sec] = head
    return f"\x1b[2m{head}.{ms * 1000 + micros:06d}Z\x1b[0m"


def journal_prefix(wall_ms: int, host: str = "host", pid: int = 4242) -> str:
    """``Feb 19 01:12:03 host cuzk-daemon[4242]: `` as journalctl prints it."""
    sec = wall_ms // 1000
    key = (sec, f"{host}[{pid}]")
    p = _journal_cache.get(key)
    if p is None:
        t = time.gmtime(sec)
        p = f"{time.strftime('%b %d %H:%M:%S', t)} {host} cuzk-daemon[{pid}]: "
        _journal_cache[key] = p
    return p


def noise_pool(rng: np.random.Generator, size: int = 4096) -> list[str]:
    """``size`` varied noise bodies (no timestamp), in random order."""
    jobs = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(32)]
    makers = [
        lambda: body(
            "DEBUG",
            "cuzk_core::pipeline",
            "synthesis progress",
            job_id=jobs[rng.integers(32)],
            partition=rng.integers(10),
            constraints=rng.integers(100_000_000, 130_278_869),
        ),
        lambda: body(
            "DEBUG",
            "h2::codec::framed_read",
            "received",
            frame=f"WindowUpdate {{ stream_id: StreamId({rng.integers(0, 99)}), "
            f"size_increment: {rng.integers(1000, 70000)} }}",
        ),
        lambda: body("DEBUG", "tower::buffer::worker", "service.ready=true processing request"),
        lambda: body(
            "INFO",
            "cuzk_server::service",
            "GetStatus",
            peer=f"10.0.{rng.integers(0, 9)}.{rng.integers(2, 250)}:{rng.integers(30000, 60000)}",
        ),
        lambda: body(
            "DEBUG",
            "cuzk_core::memory",
            "pinned buffer pool",
            free_gib=f"{rng.uniform(4, 120):.1f}",
            used_gib=f"{rng.uniform(60, 200):.1f}",
        ),
        lambda: body(
            "TRACE",
            "cuzk_core::scheduler",
            "poll",
            queue_len=rng.integers(0, 12),
            in_flight=rng.integers(0, 24),
        ),
        lambda: body("DEBUG", "hyper::proto::h1::io", f"flushed {rng.integers(80, 4000)} bytes"),
        lambda: body(
            "DEBUG",
            "bellperson::groth16::prover",
            "prover: assigning witness",
            aux=rng.integers(10_000_000, 130_000_000),
            inputs=rng.integers(10, 400),
        ),
        lambda: body(
            "INFO",
            "cuzk_core::srs",
            "SRS cache hit",
            circuit_id="porep-32g",
            size_gib="44.6",
            age_s=rng.integers(1, 90000),
        ),
        lambda: body(
            "DEBUG",
            "filecoin_proofs::api::seal",
            "seal_commit_phase2:start",
            sector_id=rng.integers(1, 99999),
        ),
    ]
    picks = rng.integers(0, len(makers), size)
    return [makers[int(k)]() for k in picks]
