"""The big benchmark log: written once by the project's simulator, cached in ``bench_data/``.

Parameters come from the environment (``BENCH_EVENTS``, ``BENCH_GPUS``, ``BENCH_NOISE``,
``BENCH_SEED``) and name the cached file, so changing one writes a new file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench_data"


def params() -> dict[str, str]:
    return {
        "events": os.environ.get("BENCH_EVENTS", "1000000"),
        "gpus": os.environ.get("BENCH_GPUS", "2"),
        "noise": os.environ.get("BENCH_NOISE", "0.9"),
        "seed": os.environ.get("BENCH_SEED", "1"),
    }


def big_log() -> Path:
    """Path of the plain benchmark log, simulated on first use."""
    p = params()
    path = DATA / f"sim-e{p['events']}-g{p['gpus']}-n{p['noise']}-s{p['seed']}.log"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        tmp = path.with_suffix(".part")
        cmd = [sys.executable, "-m", "viewer", "simulate", "-o", str(tmp)]
        for key in ("events", "gpus", "noise", "seed"):
            cmd += [f"--{key}", p[key]]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        tmp.rename(path)
    return path


def dense_log() -> Path:
    """The benchmark log's events without its other lines (``--noise 0``): TIMELINE and
    CUZK_TIMING lines only, ~147 B an event."""
    p = params()
    path = DATA / f"sim-e{p['events']}-g{p['gpus']}-n0-s{p['seed']}.log"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        tmp = path.with_suffix(".part")
        cmd = [sys.executable, "-m", "viewer", "simulate", "-o", str(tmp), "--noise", "0"]
        for key in ("events", "gpus", "seed"):
            cmd += [f"--{key}", p[key]]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        tmp.rename(path)
    return path


def big_gz() -> Path:
    """The same log gzip-compressed (``gzip -1``: rotated logs are often compressed fast)."""
    plain = big_log()
    path = plain.with_name(plain.name + ".gz")
    if not path.exists():
        tmp = path.with_suffix(".part")
        with open(tmp, "wb") as out:
            subprocess.run(["gzip", "-1", "-c", str(plain)], check=True, stdout=out)
        tmp.rename(path)
    return path


#: One record as the daemon writes it (a GPU_START with a UUID job id).
RECORD = b"TIMELINE,123456,GPU_START,0b7c6a52-8e5f-4d2b-9a1c-3f2e1d0c9b8a,worker=0,partition=3"


def _write_once(name: str, write) -> Path:
    """``bench_data/NAME``, written by ``write(file)`` on first use."""
    path = DATA / name
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        tmp = path.with_suffix(".part")
        with open(tmp, "wb") as out:
            write(out)
        tmp.rename(path)
    return path


def _repeat(out, unit: bytes, size: int) -> None:
    block = unit * max(1, (8 << 20) // len(unit))
    for _ in range(size // len(block)):
        out.write(block)
    out.write(unit * ((size % len(block)) // len(unit)))


def hostile_logs() -> dict[str, Path]:
    """The hostile shapes of issue 13, item 12, by what they are: records glued into one
    200 MB line (over MAX_LINE: skipped whole), into 50 MB lines (under it: read), and
    2 GB of one line repeated; and 200 MB of distinct events (one call's GPU_START at
    every millisecond: every line differs, every event but the first repeats it)."""

    def distinct(out) -> None:
        line = RECORD.replace(b"123456", b"%d") + b"\n"
        for k in range(0, (200 << 20) // len(line), 100_000):
            out.write(b"".join(line % (10**6 + i) for i in range(k, k + 100_000)))

    return {
        "records glued into one 200 MB line": _write_once(
            "hostile-glued-200MB-line.log",
            lambda out: (_repeat(out, RECORD, 200 << 20), out.write(b"\n")),
        ),
        "records glued into 50 MB lines": _write_once(
            "hostile-glued-50MB-lines.log",
            lambda out: [_repeat(out, RECORD, 50 << 20) or out.write(b"\n") for _ in range(4)],
        ),
        "one line repeated, 2 GB": _write_once(
            "hostile-repeated-line-2GB.log", lambda out: _repeat(out, RECORD + b"\n", 2 << 30)
        ),
        "distinct events of one call, 200 MB": _write_once(
            "hostile-distinct-events-200MB.log", distinct
        ),
    }


def restarts_log(runs: int = 3000) -> Path:
    """One log of ``runs`` daemon runs (issue 13, item 13), each a daemon start, two GPU
    workers and two jobs of three partitions with their CUZK_TIMING blocks."""
    sys.path.insert(0, str(ROOT / "tests" / "io"))
    from io_logs import cuzk_block, daemon_start, partition_lines, worker_started

    def write(out) -> None:
        for r in range(runs):
            lines = [daemon_start(), worker_started(0, 0), worker_started(1, 0)]
            t = 10
            for j in range(2):
                for p in range(3):
                    call = partition_lines(f"job-{r}-{j}", p, t, worker=p % 2)
                    lines += [*call[:5], *cuzk_block(10 + p, 5), call[5]]
                    t += 600
            out.write(("\n".join(lines) + "\n").encode())

    return _write_once(f"restarts-{runs}.log", write)
