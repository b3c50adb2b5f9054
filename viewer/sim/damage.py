"""``damaged.log``: two daemon runs through journald, with the damage real files have.

Every kind of damage is placed on purpose and counted in ``DamageReport``, so
that the README and the tests can say exactly what a reader should recover.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from viewer.sim.model import SimConfig, simulate
from viewer.sim.noise import body, journal_prefix, stamp
from viewer.sim.writer import WriteOptions, render

PID1, PID2 = 4242, 4391
CRLF_EVERY = 5  # every 5th line of session 2 ends in CRLF


@dataclass
class DamageReport:
    """What was done to the file, and what a careful reader should find."""

    events: list[int] = field(default_factory=list)  # TIMELINE events recoverable, per session
    open_gpu: int = 0  # session 1 calls with GPU_START and no GPU_END
    open_synth: int = 0  # session 1 partitions with SYNTH_START and no SYNTH_END
    lost: list[str] = field(default_factory=list)  # TIMELINE lines destroyed
    crlf_lines: int = 0
    junk_lines: int = 0
    where: dict[str, int] = field(default_factory=dict)  # damage -> 1-based physical line


def _sessions() -> tuple[tuple, tuple]:
    """(schedule, options, text) of both runs; session 1 dies mid-call."""
    s1 = simulate(SimConfig(sectors=3, pw=10, gw=2, seed=31, synth_ms=35000.0, warmup_ms=1400.0))
    # Die 1.2 s after the 12th GPU call started: both workers are then mid-call.
    order = np.argsort(s1.start)
    crash = int(s1.start[order[11]]) + 1200
    o1 = WriteOptions(journald=True, noise=0.3, seed=31, pid=PID1, until_ms=crash)
    s2 = simulate(SimConfig(sectors=2, pw=10, gw=2, seed=32, synth_ms=35000.0, warmup_ms=1400.0))
    o2 = WriteOptions(
        journald=True, noise=0.3, seed=32, pid=PID2, wall_start_ms=o1.wall_start_ms + crash + 41_000
    )
    return (s1, o1, render(s1, o1)), (s2, o2, render(s2, o2))


def _is_event(line: str) -> bool:
    return "TIMELINE," in line


def damaged_log(report: DamageReport | None = None) -> bytes:
    """The bytes of ``damaged.log``; fills ``report`` when given."""
    r = report if report is not None else DamageReport()
    rng = np.random.default_rng(99)
    (s1, o1, text1), (s2, o2, text2) = _sessions()
    lines1 = text1.splitlines(keepends=True)
    lines2 = text2.splitlines(keepends=True)
    r.events = [sum(map(_is_event, lines1)), sum(map(_is_event, lines2))]
    crash = o1.until_ms or 0
    r.open_gpu = int(((s1.start >= 0) & (s1.start <= crash) & (s1.end > crash)).sum())
    r.open_synth = int(((s1.synth_start <= crash) & (s1.synth_end > crash)).sum())

    # Binary junk in the middle of session 1 (no CR/LF inside: exactly one junk line).
    junk = bytes(b for b in rng.integers(1, 256, 96).tolist() if b not in (10, 13))
    mid = len(lines1) // 2
    out1 = [ln.encode() for ln in lines1]
    out1.insert(mid, junk + b"\n")
    # The panic, then the NULs a crashed writer leaves behind.
    end_ms = o1.wall_start_ms + crash
    jp = journal_prefix(end_ms, pid=PID1)
    panic = [
        f"{jp}thread 'gpu-worker-1' panicked at cuzk-core/src/engine.rs:812:17:\n",
        f"{jp}CUDA error 700: an illegal memory access was encountered\n",
        f"{jp}note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    ]
    out1 += [p.encode() for p in panic]
    out1.append(b"\x00" * 40 + b"\n")
    r.junk_lines = 2

    # Session 2: a torn GPU_PICKUP (cut mid-event-name), a GPU_QUEUE glued onto a
    # noise line that lost its newline, CRLF on every 5th line, a cut last line.
    pick = next(i for i, ln in enumerate(lines2) if ",GPU_PICKUP," in ln and i > len(lines2) // 2)
    head = lines2[pick].split("GPU_PICKUP")[0]
    r.lost.append(lines2[pick].split(": ", 1)[1].strip())
    lines2[pick] = head + "GPU_PIC\n"
    r.events[1] -= 1
    q = next(i for i, ln in enumerate(lines2) if ",GPU_QUEUE," in ln and i > len(lines2) // 4)
    wall = o2.wall_start_ms + int(lines2[q].split("TIMELINE,")[1].split(",")[0])
    noise = (
        journal_prefix(wall, pid=PID2)
        + stamp(wall, 417)
        + body("DEBUG", "cuzk_core::pipeline", "queue depth", depth=1).rstrip("\n")
    )
    lines2[q] = noise + "TIMELINE," + lines2[q].split("TIMELINE,", 1)[1]
    last_ms = o2.wall_start_ms + int(s2.end.max()) + 500
    cut = (
        journal_prefix(last_ms, pid=PID2)
        + stamp(last_ms)
        + body("INFO", "cuzk_daemon", "shutting down, draining GPU workers")
    )
    lines2.append(cut[: cut.index("draining") + 5])
    out2 = []
    for k, ln in enumerate(lines2):
        b = ln.encode()
        if k % CRLF_EVERY == CRLF_EVERY - 1 and b.endswith(b"\n"):
            b = b[:-1] + b"\r\n"
            r.crlf_lines += 1
        out2.append(b)
    data = b"".join(out1) + b"".join(out2)
    n1 = len(out1)
    r.where = {
        "junk": mid + 1,
        "panic": n1 - 3,
        "nul": n1,
        "restart": n1 + 1,
        "glued": n1 + q + 1,
        "torn": n1 + pick + 1,
        "last": data.count(b"\n") + 1,
    }
    return data


def report() -> DamageReport:
    """The counts of the committed ``damaged.log``."""
    r = DamageReport()
    damaged_log(r)
    return r
