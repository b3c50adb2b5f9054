"""``process_map``: work over processes, in order, with few items ahead of the reader."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from viewer.export import processes


def _square(x: int) -> int:
    return x * x


class _Recording(ThreadPoolExecutor):
    """A pool (threads stand in for processes) that counts what it was handed."""

    submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        type(self).submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_results_come_in_order_with_few_items_ahead(monkeypatch) -> None:
    """A report of 3000 daemon runs written to a pipe nobody reads: every process's results
    had piled up in this one (``pool.map`` hands out all the work at once).  Now at most
    ``AHEAD`` items per process are ahead of the one taken."""
    monkeypatch.setattr(processes, "_executor", lambda jobs: _Recording(jobs))
    _Recording.submitted = 0
    work = [(k,) for k in range(100)]
    results = processes.process_map(_square, work, 2)
    assert next(results) == 0
    assert _Recording.submitted <= processes.AHEAD * 2 + 1
    assert list(results) == [k * k for k in range(1, 100)]
    assert _Recording.submitted == 100


def test_a_reader_that_stops_early_leaves_the_rest_unrun(monkeypatch) -> None:
    monkeypatch.setattr(processes, "_executor", lambda jobs: _Recording(jobs))
    _Recording.submitted = 0
    results = processes.process_map(_square, [(k,) for k in range(100)], 2)
    assert [next(results) for _ in range(3)] == [0, 1, 4]
    results.close()
    assert _Recording.submitted <= processes.AHEAD * 2 + 3


def test_one_job_runs_here() -> None:
    assert list(processes.process_map(_square, [(2,), (3,)], 1)) == [4, 9]


def _dies_on(x: int, bad: int, marker: str) -> int:
    """Kill the calling process (as the OOM killer would) on item ``bad``; with a ``marker``
    file, only the first time."""
    import os
    import signal
    from pathlib import Path

    if x == bad and (not marker or not Path(marker).exists()):
        if marker:
            Path(marker).write_text("died once")
        os.kill(os.getpid(), signal.SIGKILL)
    return x * x


def test_a_killed_process_loses_only_its_own_item() -> None:
    """issue 27 item 14: one worker killed ended the whole fleet report with a
    BrokenProcessPool traceback.  Now the items in flight are run again alone: the one that
    kills its process again gives ``died(item)``, every other result comes, in order."""
    work = [(k, 5, "") for k in range(12)]
    out = list(processes.process_map(_dies_on, work, 3, died=lambda item: ("died", item[0])))
    assert out == [k * k if k != 5 else ("died", 5) for k in range(12)]


def test_an_item_whose_process_died_once_is_run_again(tmp_path) -> None:  # noqa: ANN001
    marker = str(tmp_path / "died")
    work = [(k, 3, marker) for k in range(8)]
    out = list(processes.process_map(_dies_on, work, 2, died=lambda item: None))
    assert out == [k * k for k in range(8)]


def test_the_workers_die_with_the_main_process(tmp_path) -> None:  # noqa: ANN001
    """issue 27 item 16: killing the fleet's main process left its workers running."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "main.py"
    script.write_text(
        "import os, sys, time\n"
        "from viewer.export.processes import process_map\n"
        "def sleepy(x):\n"
        "    os.write(1, f'{os.getpid()}\\n'.encode())  # one write: lines never interleave\n"
        "    time.sleep(60)\n"
        "    return x\n"
        "if __name__ == '__main__':\n"
        "    list(process_map(sleepy, [(1,), (2,)], 2))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        with proc.stdout:
            pids = [int(proc.stdout.readline()) for _ in range(2)]
    finally:  # never leave the main process running, whatever the workers printed
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

    def alive(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return fh.read().split()[2] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
