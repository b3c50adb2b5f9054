"""Shapes of log that once blew up a command's time or memory (issue 27, items 10 and 11),
written at any size: the tests build a moderate one, the benchmarks the size of the issue.
"""

from __future__ import annotations

from pathlib import Path

DAEMON_START = "2026-02-19T01:00:00.000212Z  INFO cuzk_daemon: cuzk-daemon starting version=0.8.0"
WORKER_STARTED = (
    "2026-02-19T01:00:00.001272Z  INFO cuzk_core::engine: pipeline GPU worker started "
    "worker_id=0 gpu=0 sub_id=0"
)


def _call(job: str, part: int, t: int) -> str:
    """One partition's six TIMELINE events on worker 0, from ``t`` ms."""
    return (
        f"TIMELINE,{t},SYNTH_START,{job},partition={part}\n"
        f"TIMELINE,{t + 100},SYNTH_END,{job},partition={part},synth_ms=100\n"
        f"TIMELINE,{t + 101},GPU_QUEUE,{job},partition={part}\n"
        f"TIMELINE,{t + 102},GPU_PICKUP,{job},worker=0,partition={part}\n"
        f"TIMELINE,{t + 103},GPU_START,{job},worker=0,partition={part}\n"
        f"TIMELINE,{t + 503},GPU_END,{job},worker=0,partition={part},gpu_ms=400\n"
    )


def many_restarts(path: Path, runs: int, second_ms: int = 610, starts: bool = True) -> Path:
    """``runs`` daemon runs in one file (~1.2 KB each, as a daemon restarted in a loop
    writes): each a daemon start line (unless ``starts`` is False), its GPU worker and one
    job of two partitions, from 10 and ``second_ms`` ms (offsets start again each run)."""
    head = f"{DAEMON_START}\n{WORKER_STARTED}\n" if starts else f"{WORKER_STARTED}\n"
    with open(path, "w", encoding="utf-8") as out:
        for r in range(runs):
            job = f"{r:08x}-8e5f-4d2b-9a1c-3f2e1d0c9b8a"
            out.write(f"{head}{_call(job, 0, 10)}{_call(job, 1, second_ms)}")
    return path


def deep_synthesis(path: Path, partitions: int) -> Path:
    """``partitions`` syntheses (jobs of 10 partitions) that all start in the first 100 ms
    and end spread over the next 100 s, in shuffled order (a daemon with unbounded
    partition workers): ``partitions`` rows at once.  SYNTH_START and SYNTH_END (~110 B
    a partition); the first 10 to end are then proved on worker 0, one after the other."""
    span_ms = 100_000
    t0 = [i * 100 // partitions for i in range(partitions)]

    def line(i: int, event: str, t: int) -> str:
        return f"TIMELINE,{t},{event},job{i // 10:07d},partition={i % 10}\n"

    with open(path, "w", encoding="utf-8") as out:
        out.write(f"{DAEMON_START}\n{WORKER_STARTED}\n")
        out.write("".join(line(i, "SYNTH_START", t0[i]) for i in range(partitions)))
        ends, calls = [], []
        for k in range(partitions):  # the k-th to end: a stride through the partitions
            i = (k * 7919) % partitions if partitions % 7919 else k
            t1 = 1000 + (k + 1) * span_ms // partitions
            ends.append(line(i, "SYNTH_END", t1)[:-1] + f",synth_ms={t1 - t0[i]}\n")
            if k < 10:
                ends.append(line(i, "GPU_QUEUE", t1))
                t = 2000 + span_ms + 500 * k
                calls += [
                    line(i, "GPU_PICKUP", t)[:-1] + ",worker=0\n",
                    line(i, "GPU_START", t + 1)[:-1] + ",worker=0\n",
                    line(i, "GPU_END", t + 401)[:-1] + ",worker=0,gpu_ms=400\n",
                ]
        out.write("".join(ends + calls))
    return path
