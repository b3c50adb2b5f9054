"""A log of 3000 daemon restarts (issue 13, item 13): open_log and the report, end to end.

The issue's target is the whole report in under 5 s; the figures go to the table ``make
bench`` prints (not timed assertions)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from biglog import ROOT, restarts_log
from table import add_row
from test_load_bench import _probe

pytestmark = pytest.mark.bench
RUNS = 3000
TARGET_S = 5.0


@pytest.fixture(scope="module")
def log():
    return restarts_log(RUNS)


def test_restarts_open_log(log):
    base = _probe("baseline")
    got = _probe("load", log)
    assert got["calls"] == RUNS * 6
    per = 1000 * got["seconds"] / RUNS
    add_row(
        f"{RUNS} restarts: open_log",
        f"{got['seconds']:.2f} s ({per:.2f} ms/session)",
        f"{TARGET_S:g} s",
        got["seconds"] / TARGET_S,
        1,
    )
    peak = got["maxrss"] - base["maxrss"]
    size = log.stat().st_size
    add_row(f"{RUNS} restarts: peak memory", f"{peak / 1e6:.0f} MB", "file size", peak / size, 0.5)


#: Runs the CLI and prints its own peak RSS (KB) on stderr's last line.
_WITH_RSS = (
    "import resource, sys\n"
    "from viewer.cli import main\n"  # python -m viewer, without leaving once it is done
    "main(sys.argv[1:])\n"
    # VmHWM, not ru_maxrss: that survives exec on Linux and would be the pytest process's
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "kb = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print(kb, file=sys.stderr)\n"
)


def _report_peak_mb(path: Path) -> tuple[float, float]:
    """(seconds, peak RSS MB) of ``report PATH`` in a fresh interpreter."""
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _WITH_RSS, "report", str(path)],
        check=True, cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def test_restarts_report(log):
    seconds, peak_mb = _report_peak_mb(log)
    # The interpreter and the report's imports, measured on a sample log of 50 calls.
    _, base_mb = _report_peak_mb(ROOT / "sample_logs" / "phase8_pw10_5sectors.log")
    add_row(
        f"{RUNS} restarts: report peak RSS",
        f"{peak_mb - base_mb:.0f} MB above {base_mb:.0f} MB (interpreter, imports)",
        "file size",
        (peak_mb - base_mb) * 1e6 / log.stat().st_size,
        0.5,
    )
    per = 1000 * seconds / RUNS
    add_row(
        f"{RUNS} restarts: report end to end",
        f"{seconds:.1f} s ({per:.1f} ms/session)",
        f"{TARGET_S:g} s",
        seconds / TARGET_S,
        1,
    )
