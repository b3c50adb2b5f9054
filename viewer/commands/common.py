"""What the log-reading commands share: the LOG / --session / --range / --workers-per-gpu
options, the A:B range type, and loading a log with errors as one stderr line and exit 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from viewer.model import Timeline

RANGE_HELP = """\
range rules (--range A:B, milliseconds in the session's TIMELINE offsets):
  busy (GPU_START->GPU_END) and kernel intervals are clipped to the range;
  idle gaps are the session's gaps clipped to it, and efficiency = busy time /
  (first GPU_START -> last GPU_END, clipped to the range);
  measured s/proof uses the jobs completed inside the range;
  transitions are those whose next job's first GPU_START lies inside it.
"""
WORKERS_HELP = "GPU workers per GPU when the log has no 'GPU worker started' lines"


def parse_range(text: str) -> tuple[float, float]:
    """``A:B`` in ms as an argparse type."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B in ms, got {text!r}") from None
    if a > b:
        raise argparse.ArgumentTypeError(f"range start {a:g} is after its end {b:g}")
    return a, b


def add_log_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="LOG", help="log file (.log, .gz, .zst)")


def add_session_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--session", type=int, default=None, metavar="N", help="only daemon run N")


def add_range_argument(p: argparse.ArgumentParser, help: str = "time window (ms)") -> None:
    p.add_argument("--range", type=parse_range, default=None, metavar="A:B", help=help)


def add_workers_argument(p: argparse.ArgumentParser, help: str = WORKERS_HELP) -> None:
    p.add_argument("--workers-per-gpu", type=int, default=None, metavar="N", help=help)


def fail(command: str, message: object) -> int:
    """Say what went wrong on stderr, prefixed by the command; the exit status 2."""
    print(f"{command}: {message}", file=sys.stderr)
    return 2


def bad_workers(command: str, workers_per_gpu: int | None) -> bool:
    """True, after saying so on stderr, when --workers-per-gpu was given below 1."""
    if workers_per_gpu is not None and workers_per_gpu < 1:
        fail(command, "--workers-per-gpu must be at least 1")
        return True
    return False


def load(command: str, path: str | Path, workers_per_gpu: int | None) -> Timeline | None:
    """The Timeline of ``path``; None after one stderr line saying why there is none
    (--workers-per-gpu below 1, a missing, unreadable or not-cuzk file)."""
    if bad_workers(command, workers_per_gpu):
        return None
    from viewer.io import LogError, open_log

    try:
        return open_log(path, workers_per_gpu=workers_per_gpu)
    except (LogError, OSError) as exc:
        fail(command, exc)
        return None
