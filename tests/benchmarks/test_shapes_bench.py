"""Shapes of log that blew up (issue 27): 30 000 daemon restarts (item 10) and 200 000
partitions synthesizing at once (item 11), written by ``tests/hostile/shapes.py`` into
``bench_data/``.

Each figure is compared with the same shape a tenth the size, measured in the same run:
a ratio near 1 is linear work (the trace of 30 000 restarts took 388 s, 100x its tenth);
memory goes against the bound of item 9 (above the interpreter and its imports, within
the log's size plus 64 MB).  Figures only, never timed assertions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from biglog import DATA, ROOT
from table import add_row

sys.path.insert(0, str(ROOT))
from tests.hostile.shapes import deep_synthesis, many_restarts  # noqa: E402

pytestmark = pytest.mark.bench
PROBE = Path(__file__).with_name("shape_probe.py")
RUNS = 30_000
PARTITIONS = 200_000
SLACK = 64e6  # item 9: peak memory above the interpreter within the log's size + 64 MB


def _log(name: str, write) -> Path:
    path = DATA / name
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        write(path.with_suffix(".part")).rename(path)
    return path


def restarts(runs: int, starts: bool = True) -> Path:
    suffix = "" if starts else "-offsets-only"
    return _log(
        f"shape-restarts-{runs}{suffix}.log",
        lambda p: many_restarts(p, runs, second_ms=610 if starts else 5000, starts=starts),
    )


def syntheses(partitions: int) -> Path:
    name = f"shape-synthesis-at-once-{partitions}.log"
    return _log(name, lambda p: deep_synthesis(p, partitions))


def _probe(*args: str | Path) -> dict:
    out = subprocess.run(
        [sys.executable, str(PROBE), *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def _rows(what: str, big: Path, small: Path, factor: int, *args: str) -> None:
    """Time against 10x the tenth-size shape, and peak memory against item 9's bound."""
    mode = "window" if args[0] == "window" else "cli"
    a = _probe(*(a.replace("{LOG}", str(small)) for a in args))
    b = _probe(*(a.replace("{LOG}", str(big)) for a in args))
    add_row(
        f"{what}: time" + (" to first frame" if mode == "window" else ""),
        f"{b['seconds']:.1f} s",
        f"{factor} x the tenth-size shape: {factor * a['seconds']:.1f} s",
        b["seconds"] / (factor * a["seconds"]),
        1.5,
    )
    held, size = b["peak"] - b["base"], big.stat().st_size
    add_row(
        f"{what}: peak memory",
        f"{held / 1e6:.0f} MB above {b['base'] / 1e6:.0f} MB (interpreter, imports)",
        f"log {size / 1e6:.0f} MB + 64 MB",
        held / (size + SLACK),
        1,
    )


def test_restarts_trace() -> None:
    _rows(
        f"{RUNS} restarts: export trace",
        restarts(RUNS), restarts(RUNS // 10), 10,
        "cli", "export", "{LOG}", "--out", str(DATA / "shape-restarts.trace.json"),
    )  # fmt: skip


def test_restarts_report() -> None:
    _rows(
        f"{RUNS} restarts: report",
        restarts(RUNS), restarts(RUNS // 10), 10,
        "cli", "report", "{LOG}",
    )  # fmt: skip


def test_restarts_told_by_offsets_alone() -> None:
    _rows(
        f"{RUNS} restarts, no daemon start line: info",
        restarts(RUNS, starts=False), restarts(RUNS // 10, starts=False), 10,
        "cli", "info", "{LOG}",
    )  # fmt: skip


def test_syntheses_at_once_window() -> None:
    _rows(
        f"{PARTITIONS} syntheses at once: window",
        syntheses(PARTITIONS), syntheses(PARTITIONS // 10), 10,
        "window", "{LOG}",
    )  # fmt: skip


def test_syntheses_at_once_png() -> None:
    _rows(
        f"{PARTITIONS} syntheses at once: export png",
        syntheses(PARTITIONS), syntheses(PARTITIONS // 10), 10,
        "cli", "export", "{LOG}", "--out", str(DATA / "shape-synthesis.png"), "--height", "900",
    )  # fmt: skip
