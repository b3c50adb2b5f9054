"""Helpers of the hostile-input tests: watching a folder for changes, a FIFO that is drained
so a wrongly opened writer never blocks a test, and running the CLI in a subprocess."""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "phase8_pw10_5sectors.log"


def snapshot(*folders: Path) -> dict[str, str]:
    """What every entry under ``folders`` is: a regular file by its content hash, anything
    else by its type (a FIFO is never opened).  Compare two snapshots to prove that
    nothing but the expected output changed."""
    out: dict[str, str] = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            for name in [*dirnames, *filenames]:
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as fh:
                        out[path] = "file " + hashlib.file_digest(fh, "sha256").hexdigest()
                elif stat.S_ISLNK(st.st_mode):
                    out[path] = "link -> " + os.readlink(path)
                else:
                    out[path] = f"mode {stat.S_IFMT(st.st_mode):o}"
    return out


@contextlib.contextmanager
def drained_fifo(path: Path) -> Iterator[list[bytes]]:
    """Make a FIFO at ``path`` and read everything written into it until the block ends
    (yields the list of chunks read): a writer that opens it never blocks the test."""
    os.mkfifo(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    chunks: list[bytes] = []
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                with contextlib.suppress(BlockingIOError):
                    data = os.read(fd, 1 << 16)
                    if data:
                        chunks.append(data)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        yield chunks
    finally:
        stop.set()
        thread.join()
        os.close(fd)


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: headless Qt, a strict UTF-8 stdout (as in a
    desktop terminal, where a lone surrogate cannot be printed), this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "QT_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        PYTHONIOENCODING="utf-8:strict",
        QT_QPA_PLATFORM="offscreen",
        LC_ALL="C.UTF-8",
    )
    env.update(extra)
    return env


def run_cli(
    argv: Sequence[str | os.PathLike], *, timeout: float, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess:
    """``python -m viewer ARGV`` in a subprocess, killed after ``timeout`` seconds
    (subprocess.TimeoutExpired then propagates: a hang is a failure)."""
    return subprocess.run(
        [sys.executable, "-m", "viewer", *map(os.fspath, argv)],
        capture_output=True,
        timeout=timeout,
        cwd=cwd,
        env=cli_env(**env),
        stdin=subprocess.DEVNULL,
    )


#: Runs ARGV in a child and prints its peak RSS in bytes and its exit status: a small parent,
#: so that the child's peak is its own (ru_maxrss survives exec).
_PEAK = (
    "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, p.returncode)"
)


def peak_rss(argv: Sequence[str | os.PathLike], *, timeout: float, **env: str) -> tuple[int, int]:
    """(peak resident bytes, exit status) of ``python ARGV`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, sys.executable, *map(os.fspath, argv)],
        capture_output=True,
        timeout=timeout,
        env=cli_env(**env),
        stdin=subprocess.DEVNULL,
        check=True,
    )
    peak, code = done.stdout.split()
    return int(peak), int(code)
