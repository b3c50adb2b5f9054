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
