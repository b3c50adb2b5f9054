"""What the log-reading commands share: the LOG / --session / --range / --workers-per-gpu
options, bounded number types (``Bound``) and the A:B range type, and loading a log with
errors as one stderr line and exit 2."""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
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
#: What a text to show writes where the program's name goes (``named``).
PROG = "{prog}"


def prog() -> str:
    """The name the program was started as, for usage lines and the commands a message
    tells the user to type: ``cuzk-timeline`` run as the installed script (its basename,
    whatever it was installed as), ``python -m viewer`` run as the module."""
    argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.basename(argv0)
    if not name or name == "-c" or argv0.endswith("__main__.py"):
        return "python -m viewer"
    return name.removesuffix(".exe")


def named(text: str) -> str:
    """``text`` with the program's name (``prog``) for each ``{prog}``."""
    return text.replace(PROG, prog())


@dataclass(frozen=True)
class Bound:
    """The values an option allows: finite numbers from ``lo`` to ``hi`` (whole numbers
    unless ``integer`` is False).  Called with the option's text it is an argparse type:
    the error names the range (argparse adds the option's name)."""

    lo: float
    hi: float
    unit: str = ""
    integer: bool = True

    def describe(self) -> str:
        what = "a whole number" if self.integer else "a number"
        return f"{what} from {self.lo:.12g} to {self.hi:.12g}{self.unit}"

    def contains(self, value: float) -> bool:
        return self.lo <= value <= self.hi  # False for NaN; ints of any size compare exactly

    def __call__(self, text: str) -> int | float:
        try:
            value = int(text) if self.integer else float(text)
        except ValueError:
            value = math.nan
        if not self.contains(value):
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {text!r}")
        return value

    def check(self, option: str, value: float | None) -> None:
        """ValueError naming ``option`` when ``value`` (None: not given) is outside."""
        if value is not None and not self.contains(value):
            raise ValueError(f"{option} must be {self.describe()}, not {value!r}")


#: GPU workers per GPU (a GPU runs a handful; 1024 leaves room and bounds every table).
WORKERS = Bound(1, 1024)
#: A session number, counted from 1 as the window, `info` and every report name them.
SESSION = Bound(1, 1_000_000)
SESSION_HELP = "only daemon run N, counted from 1 as `info` lists them"
#: Every --range end, in ms of a session's clock (±1e12 ms is about 31.7 years).
RANGE_LIMIT_MS = 1e12


def parse_range(text: str) -> tuple[float, float]:
    """``A:B`` in ms as an argparse type: finite, within ``RANGE_LIMIT_MS``, A <= B."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B in ms, got {text!r}") from None
    if not all(math.isfinite(x) and abs(x) <= RANGE_LIMIT_MS for x in (a, b)):
        raise argparse.ArgumentTypeError(
            f"A and B must be finite numbers of ms from {-RANGE_LIMIT_MS:g} to "
            f"{RANGE_LIMIT_MS:g}, not {text!r}"
        )
    if a > b:
        raise argparse.ArgumentTypeError(f"range start {a:g} is after its end {b:g}")
    return a, b


def add_log_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="LOG", help="log file (plain, .gz or .zst)")


def add_session_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--session", type=SESSION, default=None, metavar="N", help=SESSION_HELP)


def session_position(timeline: Timeline, number: int | None) -> int | None:
    """The position in ``timeline.sessions`` of session ``number`` (counted from 1), which the
    export functions take; None (every session, or the main one) stays None.  ValueError
    naming the file and the session numbers it has."""
    return None if number is None else timeline.numbered(number).index


def add_range_argument(p: argparse.ArgumentParser, help: str = "time window (ms)") -> None:
    p.add_argument("--range", type=parse_range, default=None, metavar="A:B", help=help)


def add_format_arguments(
    p: argparse.ArgumentParser, schema: str, markdown: str = "a Markdown table"
) -> argparse._MutuallyExclusiveGroup:
    """--json (format ``schema``) or --markdown (``markdown``), one of them; the group, for
    more forms."""
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help=f"JSON (format {schema})")
    fmt.add_argument("--markdown", action="store_true", help=markdown)
    return fmt


def add_workers_argument(p: argparse.ArgumentParser, help: str = WORKERS_HELP) -> None:
    p.add_argument(
        "--workers-per-gpu", type=WORKERS, default=None, metavar="N", help=f"{help} (1-1024)"
    )


def write_stdout(data: bytes | str) -> None:
    """``data`` on stdout: bytes (UTF-8 JSON) straight to its binary buffer, after the text
    written before them; to a text-only stream (a test's StringIO) decoded."""
    if isinstance(data, str):
        sys.stdout.write(data)
        return
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


def fail(command: str, message: object) -> int:
    """Say what went wrong on stderr, prefixed by the command; the exit status 2."""
    print(f"{command}: {message}", file=sys.stderr)
    return 2


def bad_workers(command: str, workers_per_gpu: int | None) -> bool:
    """True, after saying so on stderr, when --workers-per-gpu is out of ``WORKERS``
    (the option's type checks it already; this guards callers that bypass argparse)."""
    try:
        WORKERS.check("--workers-per-gpu", workers_per_gpu)
    except ValueError as exc:
        fail(command, exc)
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


#: GiB of memory an option allows (a pebibyte: past it a figure is a typo).
GIB = Bound(0, 1 << 20, " GiB", integer=False)


def gib_pair(text: str) -> tuple[float, float]:
    """``X`` or ``LOW,HIGH`` GiB (an argparse type): one figure or a range."""
    parts = text.split(",")
    if len(parts) > 2:
        raise argparse.ArgumentTypeError(f"give X or LOW,HIGH GiB, not {text!r}")
    lo, hi = (GIB(x.strip()) for x in (parts * 2)[:2])
    if lo > hi:
        raise argparse.ArgumentTypeError(f"LOW must not exceed HIGH, not {text!r}")
    return float(lo), float(hi)


def add_memory_arguments(p: argparse.ArgumentParser) -> None:
    """The memory model's figures (``viewer.analysis.memory``), default a 32 GiB PoRep's."""
    from viewer.analysis.memory import DEFAULT as m

    g = p.add_argument_group(
        "memory (GiB; default a 32 GiB PoRep's, from upstream's published figures)"
    )
    g.add_argument(
        "--baseline-gib",
        type=GIB,
        metavar="X",
        help=f"SRS, PCE, runtime (default {m.baseline_gib:g})",
    )
    g.add_argument(
        "--partition-gib",
        type=gib_pair,
        metavar="X|LO,HI",
        help="a synthesized partition until its kernels end (default "
        f"{m.partition_gib[0]:g},{m.partition_gib[1]:g})",
    )
    g.add_argument(
        "--synth-peak-gib",
        type=GIB,
        metavar="X",
        help=f"the most a running synthesis holds (default {m.synth_peak_gib:g})",
    )
    g.add_argument(
        "--after-gib",
        type=gib_pair,
        metavar="X|LO,HI",
        help="a partition after its kernels, to GPU_END (default "
        f"{m.after_gib[0]:g},{m.after_gib[1]:g})",
    )


def memory_model(args: argparse.Namespace):  # noqa: ANN201
    """The ``MemoryModel`` of ``add_memory_arguments``' options (defaults where not given)."""
    from dataclasses import replace

    from viewer.analysis.memory import DEFAULT

    given = {
        k: getattr(args, k)
        for k in ("baseline_gib", "partition_gib", "synth_peak_gib", "after_gib")
        if getattr(args, k, None) is not None
    }
    return replace(DEFAULT, **given)
