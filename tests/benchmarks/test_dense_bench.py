"""Dense logs of many short jobs (issue 27, item 9): a daemon serving mostly PoSt proofs,
every job one monolithic call, TIMELINE lines only (``tests/hostile/dense.py``), written
once into ``bench_data/``: 1.5 M jobs gzip-compressed (the issue's shape) and 105 000 as a
49 MB plain file.

Each command (the what-if with its predicted log written too), and ``open_log`` alone, runs
in a fresh process, ``open_log`` and the what-if with either scanner.  Its
peak memory above the interpreter (``python -c "import viewer.cli"``, measured in the same
run) goes against item 9's bound: the log's text size plus 64 MB.  Its time goes against
10 x the same command on the shape a tenth the size (linear work: a ratio near 1).
Figures only, never timed assertions."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from biglog import DATA, ROOT
from table import add_row

sys.path.insert(0, str(ROOT))
from tests.hostile.dense import dense_jobs  # noqa: E402

pytestmark = pytest.mark.bench
SLACK = 64e6  # item 9: peak memory above the interpreter within the log's text + 64 MB
SHAPES = {
    "1.5 M one-call jobs (.gz)": (1_500_000, ".log.gz"),
    "105 000 one-call jobs (49 MB)": (105_000, ".log"),
}
#: The 1.5 M shape with each job's durations its own (``dense.varied_ms``): no column one
#: value, as a real daemon's log (a what-if's plan holds a column of one value once).
VARIED = "1.5 M one-call jobs, varied durations (.gz)"
#: The commands run on the varied shape too: the what-if, whose plan and played runs are
#: where one value held once made the difference, and the JSON report and a CSV table,
#: whose rows hold a value per job where the one-call shape's repeat.
VARIED_COMMANDS = (
    "whatif --gw 3",
    "whatif --gw 3 --out",
    "report --json",
    "report --markdown",
    "export transitions.csv",
    "sweep --knob gw --values 1,3",
)
COMMANDS = {
    "info": ["-m", "viewer", "info", "{LOG}"],
    "report": ["-m", "viewer", "report", "{LOG}"],
    # Its tables (jobs, transitions, idle gaps) a row each: 3 GB at 1.5 M jobs as dicts.
    "report --json": ["-m", "viewer", "report", "{LOG}", "--json"],
    "report --markdown": ["-m", "viewer", "report", "{LOG}", "--markdown"],  # every transition
    # Three what-ifs (1, 3 and the log's own 2) played from one log taken once.
    "sweep --knob gw --values 1,3": [
        "-m",
        "viewer",
        "sweep",
        "{LOG}",
        "--knob",
        "gw",
        "--values",
        "1,3",
    ],  # fmt: skip
    "whatif --gw 3": ["-m", "viewer", "whatif", "{LOG}", "--gw", "3"],
    "whatif --gw 3 --out": ["-m", "viewer", "whatif", "{LOG}", "--gw", "3", "--out", "{PRED}"],
    "export trace": ["-m", "viewer", "export", "{LOG}", "--out", "{OUT}"],
    # A table of a row per transition, as CSV.
    "export transitions.csv": [
        "-m",
        "viewer",
        "export",
        "{LOG}",
        "--out",
        "{CSV}",
        "--table",
        "transitions",
    ],  # fmt: skip
    "open_log": [
        "-c",
        "from viewer import heap; heap.one_arena(); heap.reuse_big_blocks(); "
        "from viewer.io.reader import open_log; open_log({LOG!r})",
    ],
}
#: Runs ARGV in a child and prints [seconds, the child's peak RSS in bytes, exit status]:
#: a small parent, so that the child's peak is its own (ru_maxrss survives exec).
WRAPPER = (
    "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "print(json.dumps([time.perf_counter() - t, "
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, p.returncode]))"
)


def _log(jobs: int, suffix: str, varied: bool = False) -> Path:
    path = DATA / f"dense-{'varied-' if varied else ''}jobs-{jobs}{suffix}"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        part = path.with_name(f"{path.name}.part{suffix}")  # (.gz: written compressed)
        dense_jobs(part, jobs, varied=varied).rename(path)
    return path


def _text_bytes(path: Path) -> int:
    """The log's text size (a .gz file's decompressed)."""
    if path.suffix != ".gz":
        return path.stat().st_size
    total = 0
    with gzip.open(path, "rb") as fh:
        while block := fh.read(16 << 20):
            total += len(block)
    return total


#: The commands run with the pure-Python scanner too: open_log, and the what-if, whose peak
#: is the loaded log's beside its plan (the other commands share open_log's).
BOTH_SCANNERS = ("open_log", "whatif --gw 3", "whatif --gw 3 --out")


def _run(argv: list[str], log: Path, pure: bool = False) -> tuple[float, int]:
    """(seconds, peak RSS) of ``python ARGV`` on ``log`` in a fresh process."""
    out, pred, csv = DATA / "dense.trace.json", DATA / "dense.predicted.log", DATA / "dense.csv"
    args = [a.format(LOG=str(log), OUT=str(out), PRED=str(pred), CSV=str(csv)) for a in argv]
    env = {k: v for k, v in os.environ.items() if k != "CUZK_PURE_PYTHON"}
    if pure:
        env["CUZK_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, sys.executable, *args],
        cwd=ROOT, capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    seconds, peak, code = json.loads(done.stdout)
    assert code == 0, (args, code)
    return seconds, peak


@pytest.fixture(scope="module")
def interpreter() -> int:
    """Peak RSS of the interpreter with the command line imported."""
    return _run(["-c", "import viewer.cli"], ROOT)[1]


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "python"])
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_dense_jobs(shape: str, command: str, pure: bool, interpreter: int) -> None:
    if pure and command not in BOTH_SCANNERS:
        pytest.skip("the pure-Python scanner: open_log and the what-if (the others share it)")
    jobs, suffix = SHAPES[shape]
    _rows(shape, command, pure, interpreter, _log(jobs, suffix), _log(jobs // 10, suffix))


@pytest.mark.parametrize("command", VARIED_COMMANDS)
def test_dense_varied_jobs(command: str, interpreter: int) -> None:
    big, tenth = _log(1_500_000, ".log.gz", True), _log(150_000, ".log.gz", True)
    _rows(VARIED, command, False, interpreter, big, tenth)


def _rows(shape: str, command: str, pure: bool, interpreter: int, big: Path, tenth: Path) -> None:
    """The time and peak memory rows of ``command`` on ``big`` (``tenth``: a tenth its size)."""
    argv = COMMANDS[command]
    small_s, _ = _run(argv, tenth, pure)
    seconds, peak = _run(argv, big, pure)
    scanner = " (pure-Python scanner)" if pure else ""
    what = f"dense: {shape}, {command}{scanner}"
    add_row(
        f"{what}: time",
        f"{seconds:.1f} s",
        f"10 x the tenth-size shape: {10 * small_s:.1f} s",
        seconds / (10 * small_s),
        1.5,
    )
    held, text = peak - interpreter, _text_bytes(big)
    add_row(
        f"{what}: peak memory",
        f"{held / 1e6:.0f} MB above {interpreter / 1e6:.0f} MB (the interpreter)",
        f"log text {text / 1e6:.0f} MB + 64 MB",
        held / (text + SLACK),
        1,
    )


@pytest.mark.parametrize("shape", [*SHAPES, VARIED])
def test_dense_jobs_window(shape: str) -> None:
    """The window opening the shape (offscreen), as ``shape_probe.py`` measures it: time to
    the first frame with the log drawn, and peak memory above the shown empty window (the
    varied shape too: its gaps, transitions and blocks are no views of one another)."""
    varied = shape == VARIED
    jobs, suffix = (1_500_000, ".log.gz") if varied else SHAPES[shape]
    probe = Path(__file__).with_name("shape_probe.py")

    def run(log: Path) -> dict:
        done = subprocess.run(
            [sys.executable, str(probe), "window", str(log)],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return json.loads(done.stdout.splitlines()[-1])

    big, tenth = _log(jobs, suffix, varied), _log(jobs // 10, suffix, varied)
    small, b = run(tenth), run(big)
    add_row(
        f"dense: {shape}, window: time to first frame",
        f"{b['seconds']:.1f} s",
        f"10 x the tenth-size shape: {10 * small['seconds']:.1f} s",
        b["seconds"] / (10 * small["seconds"]),
        1.5,
    )
    held, text = b["peak"] - b["base"], _text_bytes(big)
    add_row(
        f"dense: {shape}, window: peak memory",
        f"{held / 1e6:.0f} MB above {b['base'] / 1e6:.0f} MB (the empty window)",
        f"log text {text / 1e6:.0f} MB + 64 MB",
        held / (text + SLACK),
        1,
    )
